// scaling.svg of ringfuse-bench compare, given two --threads counts or more: for stat and for
// create, a panel of median ops/s (log scale) against client threads, one line per config
// (colours as in chart.svg), drawn by hand like chart.svg.
#pragma once

#include <string>
#include <vector>

#include "tools/compare_run.h"

namespace ringfuse::tools {

// The chart, or "" if no workload ran at more than one thread count.
std::string ScalingChartSvg(const CompareOptions& options, const std::vector<Sample>& samples);

}  // namespace ringfuse::tools
