#include "tools/stat_loop.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/deadline.h"

namespace ringfuse::tools {
namespace {

// The errno of one call of `probe`, 0 for success.
int Call(const StatProbe& probe) {
  int result = 0;
  if (probe.kind == StatProbe::Kind::kRefetch) {
    struct statx stx;
    result = ::statx(AT_FDCWD, probe.path.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_FORCE_SYNC,
                     STATX_BASIC_STATS, &stx);
  } else {
    struct stat st;
    result = ::lstat(probe.path.c_str(), &st);
  }
  return result == 0 ? 0 : errno;
}

int ExpectedErrno(StatProbe::Kind kind) { return kind == StatProbe::Kind::kMissing ? ENOENT : 0; }

// The benchmark's stop signals go to its main thread: one delivered here would interrupt a FUSE
// request (the kernel sends INTERRUPT) and fail the call for a reason of the benchmark's own.
void BlockSignalsInThisThread() {
  sigset_t all;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

}  // namespace

StatLoop::StatLoop(std::vector<StatProbe> probes)
    : probes_(std::move(probes)), thread_([this] { Run(); }) {}

StatLoop::~StatLoop() { Stop(); }

StatLoopResult StatLoop::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  return result_;
}

void StatLoop::Run() {
  BlockSignalsInThisThread();
  for (size_t next = 0; !stop_; next = (next + 1) % probes_.size()) {
    const StatProbe& probe = probes_[next];
    const base::Stopwatch stopwatch;
    const int error = Call(probe);
    const double us = absl::ToDoubleMicroseconds(stopwatch.elapsed());
    ++result_.calls;
    result_.max_us = std::max(result_.max_us, us);
    if (probe.kind == StatProbe::Kind::kCached) {
      result_.max_cached_us = std::max(result_.max_cached_us, us);
    }
    if (error != ExpectedErrno(probe.kind) && result_.failed_calls++ == 0) {
      result_.first_failure = absl::StrFormat("%s: %s", probe.path, std::strerror(error));
    }
  }
}

}  // namespace ringfuse::tools
