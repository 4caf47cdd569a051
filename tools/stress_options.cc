#include "tools/stress_options.h"

#include "absl/strings/str_cat.h"
#include "tools/compare_threads.h"

namespace ringfuse::tools {
namespace {

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
