// --threads of ringfuse-bench compare: the client thread counts the stat and create workloads run
// at, one measurement of each per count, in rising order so that the scaling table reads down.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ringfuse::tools {

// More threads than this would measure the machine's scheduler, not a daemon (and each create
// thread needs its own directory in every source tree).
inline constexpr int kMaxClientThreads = 1024;

// "1,2,4,8,16" -> {1, 2, 4, 8, 16}, sorted; an error names the bad item: not a number, not in
// 1..kMaxClientThreads, given twice, or nothing given.
absl::StatusOr<std::vector<int>> ParseThreadCounts(const std::string& text);

}  // namespace ringfuse::tools
