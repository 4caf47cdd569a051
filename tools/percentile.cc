#include "tools/percentile.h"

#include <algorithm>
#include <cmath>

namespace ringfuse::tools {

double Percentile(std::vector<double>& values, double p) {
  if (values.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  const size_t at = std::clamp<size_t>(rank, 1, values.size()) - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(at), values.end());
  return values[at];
}

}  // namespace ringfuse::tools
