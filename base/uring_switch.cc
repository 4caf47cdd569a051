#include "base/uring_switch.h"

#include <fstream>

#include "absl/strings/str_format.h"

namespace ringfuse::base {
namespace {

constexpr const char* kEnableUring = "/sys/module/fuse/parameters/enable_uring";

bool WriteParameter(const std::string& value) {
  std::ofstream file(kEnableUring);
  file << value;
  file.flush();
  return static_cast<bool>(file);
}

}  // namespace

absl::Status UringSwitch::TurnOn() {
  std::string old;
  std::ifstream(kEnableUring) >> old;
  if (old.empty()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s is missing: this kernel has no FUSE-over-io_uring", kEnableUring));
  }
  if (old == "Y") return absl::OkStatus();
  if (!WriteParameter("Y")) {
    return absl::PermissionDeniedError(absl::StrFormat("cannot write Y to %s", kEnableUring));
  }
  restore_ = old;
  return absl::OkStatus();
}

UringSwitch::~UringSwitch() {
  if (!restore_.empty()) WriteParameter(restore_);
}

}  // namespace ringfuse::base
