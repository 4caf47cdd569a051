#include "tests/skip_allowlist.h"

#include <fnmatch.h>

#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace ringfuse::testing {

absl::StatusOr<SkipAllowlist> SkipAllowlist::Read(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrFormat("cannot read %s", path));
  SkipAllowlist allowlist;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    const absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || text.front() == '#') continue;
    const size_t space = text.find_first_of(" \t");
    const absl::string_view reason =
        space == absl::string_view::npos ? "" : absl::StripAsciiWhitespace(text.substr(space));
    if (reason.empty()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s:%d: a pattern without the reason why it may skip", path, number));
    }
    allowlist.entries_.push_back({std::string(text.substr(0, space)), std::string(reason)});
  }
  return allowlist;
}

const AllowedSkip* SkipAllowlist::Find(std::string_view test_name) const {
  const std::string name(test_name);
  for (const AllowedSkip& entry : entries_) {
    if (::fnmatch(entry.pattern.c_str(), name.c_str(), 0) == 0) return &entry;
  }
  return nullptr;
}

}  // namespace ringfuse::testing
