#include "tools/bench_system.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "absl/strings/str_format.h"

namespace ringfuse::tools {
namespace {

volatile std::sig_atomic_t stop_requested = 0;

void OnStopSignal(int) { stop_requested = 1; }

}  // namespace

std::optional<std::string> WhyFuseMountsCannotRun() {
  if (::geteuid() != 0) return "it mounts FUSE filesystems and needs root";
  if (::access("/dev/fuse", R_OK | W_OK) != 0) {
    return absl::StrFormat("/dev/fuse is not usable: %s", std::strerror(errno));
  }
  return std::nullopt;
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
