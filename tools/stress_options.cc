#include "tools/stress_options.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ringfuse::tools {
namespace {

absl::StatusOr<std::vector<int>> ParseThreadCounts(absl::string_view text) {
  std::vector<int> counts;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    int count = 0;
    if (!absl::SimpleAtoi(item, &count) || count < 1 || count > kMaxStressThreads) {
      return absl::InvalidArgumentError(absl::StrCat("--threads takes thread counts from 1 to ",
                                                     kMaxStressThreads, ", comma-separated"));
    }
    if (std::find(counts.begin(), counts.end(), count) != counts.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--threads lists ", count, " twice"));
    }
    counts.push_back(count);
  }
  return counts;
}

absl::Status CheckRange(absl::string_view flag, int value, int most) {
  if (value >= 1 && value <= most) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(flag, " takes 1 to ", most, ", not ", value));
}

}  // namespace

absl::StatusOr<StressOptions> ParseStressOptions(const StressFlags& flags) {
  absl::StatusOr<std::vector<int>> threads = ParseThreadCounts(flags.threads);
  if (!threads.ok()) return threads.status();
  for (absl::Status checked : {CheckRange("--seconds", flags.seconds, 3600),
                               CheckRange("--files", flags.files, kMaxStressFiles),
                               CheckRange("--rounds", flags.rounds, 100)}) {
    if (!checked.ok()) return checked;
  }
  if (flags.dir.empty()) return absl::InvalidArgumentError("--dir names no directory");
  return StressOptions{*std::move(threads), flags.seconds, flags.files,
                       flags.rounds,        flags.dir,     flags.json};
}

}  // namespace ringfuse::tools
