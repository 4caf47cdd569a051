// The "Scaling" section of ringfuse-bench compare's results.md, given two --threads counts or
// more: for stat and for create, one table with a row per client thread count and a column per
// config, each cell the median ops/s with its ratio against the first daemon config (d) and
// against the same config at the fewest threads (s, its own scaling).
#pragma once

#include <string>
#include <vector>

#include "tools/compare_run.h"

namespace ringfuse::tools {

// The workloads of the run that ran at more than one thread count, in order.
std::vector<std::string> ScaledWorkloads(const CompareOptions& options);

// The section's markdown, or "" if no workload scaled.
std::string ScalingSection(const CompareOptions& options, const std::vector<Sample>& samples);

}  // namespace ringfuse::tools
