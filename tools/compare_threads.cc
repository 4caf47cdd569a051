#include "tools/compare_threads.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ringfuse::tools {

absl::StatusOr<std::vector<int>> ParseThreadCounts(const std::string& text) {
  std::vector<int> counts;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    int count = 0;
    if (!absl::SimpleAtoi(item, &count) || count < 1 || count > kMaxClientThreads) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--threads: \"", item, "\" is not a thread count from 1 to ", kMaxClientThreads));
    }
    // A count given twice would be measured twice a round, and its medians taken over both.
    if (std::find(counts.begin(), counts.end(), count) != counts.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--threads: ", count, " is given twice"));
    }
    counts.push_back(count);
  }
  std::sort(counts.begin(), counts.end());
  return counts;
}

}  // namespace ringfuse::tools
