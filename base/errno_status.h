// absl::Status from an errno value (Debian 12's Abseil predates absl::ErrnoToStatus).
#pragma once

#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ringfuse::base {

// "what: strerror(error)", with the status code errno maps to.
inline absl::Status ErrnoStatus(int error, std::string_view what) {
  return absl::Status(
      absl::ErrnoToStatusCode(error),
      absl::StrCat(absl::string_view(what.data(), what.size()), ": ", std::strerror(error)));
}

}  // namespace ringfuse::base
