// The tests allowed to skip in CI, read from tests/skip_allowlist.txt: one a line, a name pattern
// (fnmatch wildcards, matched against the full test name, Suite.Test/Param), then the reason.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ringfuse::testing {

struct AllowedSkip {
  std::string pattern;
  std::string reason;
};

class SkipAllowlist {
 public:
  // Fails, naming the file and line, on a line without a reason: every allowed skip says why.
  static absl::StatusOr<SkipAllowlist> Read(const std::string& path);

  // The entry that allows `test_name` to skip, or null.
  const AllowedSkip* Find(std::string_view test_name) const;

 private:
  std::vector<AllowedSkip> entries_;
};

}  // namespace ringfuse::testing
