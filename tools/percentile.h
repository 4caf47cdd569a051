// The tools' one percentile.
#pragma once

#include <vector>

namespace ringfuse::tools {

// The p-quantile (0 < p <= 1) of `values` by nearest rank: of 100 values the p99 is the second
// largest, of 3 the largest, of 4 the p50 is the second smallest. Reorders `values`; 0 if empty.
double Percentile(std::vector<double>& values, double p);

}  // namespace ringfuse::tools
