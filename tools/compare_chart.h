// chart.svg of ringfuse-bench compare: for every row of the medians table, one horizontal bar
// per config with its ratio against the first daemon config (a dashed line at 1.0x), written
// by hand so that the tool needs no plotting library.
#pragma once

#include <string>
#include <vector>

#include "tools/compare_run.h"

namespace ringfuse::tools {

std::string ChartSvg(const CompareOptions& options, const std::vector<Sample>& samples);

}  // namespace ringfuse::tools
