#include "tools/bench_system.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>

#include "absl/strings/str_format.h"

namespace ringfuse::tools {
namespace {

constexpr const char* kEnableUring = "/sys/module/fuse/parameters/enable_uring";

volatile std::sig_atomic_t stop_requested = 0;

void OnStopSignal(int) { stop_requested = 1; }

bool WriteParameter(const std::string& value) {
  std::ofstream file(kEnableUring);
  file << value;
  file.flush();
  return static_cast<bool>(file);
}

}  // namespace

std::optional<std::string> WhyFuseMountsCannotRun() {
  if (::geteuid() != 0) return "it mounts FUSE filesystems and needs root";
  if (::access("/dev/fuse", R_OK | W_OK) != 0) {
    return absl::StrFormat("/dev/fuse is not usable: %s", std::strerror(errno));
  }
  return std::nullopt;
}

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

void CatchStopSignals() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    ::sigaction(signal_number, &action, nullptr);
  }
}

bool StopRequested() { return stop_requested != 0; }

}  // namespace ringfuse::tools
