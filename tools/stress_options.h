// ringfuse-bench stress's command line: which thread counts to drive PassthroughFs with, for how
// long, over how many files. A bad value is a usage error, never a silent default.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ringfuse::tools {

struct StressOptions {
  std::vector<int> threads;  // thread counts, rising, each measured once a round
  int seconds = 3;           // per thread count and round
  int files = 10000;         // small files in the tree's one directory
  int rounds = 3;
  std::string dir;   // where the temporary tree is made
  std::string json;  // where the results go as JSON too; empty: nowhere
};

// The flags as given (bench.cc fills in the defaults).
struct StressFlags {
  std::string threads = "1,2,8,64";
  int seconds = 3;
  int files = 10000;
  int rounds = 3;
  std::string dir = "/var/tmp";
  std::string json = "";  // none
};

inline constexpr int kMaxStressFiles = 1'000'000;

// InvalidArgumentError naming the flag for a value out of range, a thread count that is not a
// number or is listed twice, or an empty --dir.
absl::StatusOr<StressOptions> ParseStressOptions(const StressFlags& flags);

}  // namespace ringfuse::tools
