#include "tools/compare_daemon.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/deadline.h"
#include "base/errno_status.h"
#include "base/fd.h"
#include "base/wait_status.h"
#include "tools/bench_child.h"
#include "tools/bench_system.h"

namespace ringfuse::tools {
namespace {

constexpr absl::Duration kMountTimeout = absl::Seconds(20);
constexpr absl::Duration kExitTimeout = absl::Seconds(10);
constexpr absl::Duration kPollInterval = absl::Milliseconds(10);

// In the child: the daemon's command line, with its output in the log.
[[noreturn]] void ExecDaemon(const std::vector<std::string>& argv, int log_fd, pid_t benchmark) {
  BecomeDaemonChild(log_fd, benchmark);
  std::vector<char*> pointers;
  for (const std::string& arg : argv) pointers.push_back(const_cast<char*>(arg.c_str()));
  pointers.push_back(nullptr);
  ::execv(pointers[0], pointers.data());
  std::fprintf(stderr, "cannot run %s: %s\n", pointers[0], std::strerror(errno));
  ::_exit(127);
}

// Waits for the child to end, at most `timeout`.
std::optional<int> ReapWithin(pid_t pid, absl::Duration timeout) {
  const base::Deadline deadline(timeout);
  std::optional<int> status;
  while (!(status = ReapChild(pid, false)) && !deadline.passed()) absl::SleepFor(kPollInterval);
  return status;
}

}  // namespace

bool IsFuseMount(const std::string& path) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  // "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS";
  // the paths made here have no characters mountinfo escapes.
  for (std::string line; std::getline(mountinfo, line);) {
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    if (fields.size() < 5 || fields[4] != path) continue;
    const std::string marker = " - ";
    const size_t dash = line.find(marker);
    if (dash == std::string::npos) continue;
    const std::string fstype =
        line.substr(dash + marker.size(), line.find(' ', dash + 3) - dash - 3);
    if (fstype == "fuse" || fstype == "fuseblk" || absl::StartsWith(fstype, "fuse.")) return true;
  }
  return false;
}

absl::StatusOr<MountedDaemon> MountedDaemon::Start(const std::vector<std::string>& argv,
                                                   const std::string& mountpoint,
                                                   const std::string& log) {
  base::UniqueFd log_fd(::open(log.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644));
  if (!log_fd.valid()) return base::ErrnoStatus(errno, log);
  const pid_t self = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return base::ErrnoStatus(errno, "fork");
  if (pid == 0) ExecDaemon(argv, log_fd.get(), self);
  MountedDaemon daemon(pid, mountpoint, log);
  if (absl::Status mounted = daemon.AwaitMount(); !mounted.ok()) {
    (void)daemon.Stop();
    return mounted;
  }
  return daemon;
}

MountedDaemon::MountedDaemon(MountedDaemon&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      exit_status_(other.exit_status_),
      mountpoint_(std::move(other.mountpoint_)),
      log_(std::move(other.log_)) {}

MountedDaemon::~MountedDaemon() { (void)Stop(); }

absl::Status MountedDaemon::AwaitMount() {
  const base::Deadline deadline(kMountTimeout);
  while (!deadline.passed() && !StopRequested()) {
    if ((exit_status_ = ReapChild(pid_, false))) {
      return absl::UnavailableError(absl::StrFormat("the daemon %s before mounting:\n%s",
                                                    base::DescribeExit(exit_status_), LogText()));
    }
    if (IsFuseMount(mountpoint_)) return absl::OkStatus();
    absl::SleepFor(kPollInterval);
  }
  if (StopRequested()) return absl::CancelledError("stopped by a signal");
  return absl::DeadlineExceededError(
      absl::StrFormat("the daemon did not mount %s within %s:\n%s", mountpoint_,
                      absl::FormatDuration(kMountTimeout), LogText()));
}

absl::Status MountedDaemon::Stop() {
  if (pid_ < 0) return absl::OkStatus();
  if (!exit_status_) {
    ::kill(pid_, SIGTERM);
    exit_status_ = ReapWithin(pid_, kExitTimeout);
  }
  // A daemon that ends on SIGTERM unmounts; one that did not leaves the mount to detach, and a
  // daemon that hangs on a detached mount only ends by SIGKILL.
  const bool left_mounted =
      IsFuseMount(mountpoint_) && ::umount2(mountpoint_.c_str(), MNT_DETACH) == 0;
  const bool killed = !exit_status_;
  if (killed) {
    ::kill(pid_, SIGKILL);
    exit_status_ = ReapChild(pid_, true);
  }
  pid_ = -1;
  if (!killed && !left_mounted && base::ExitedCleanly(exit_status_)) {
    return absl::OkStatus();
  }
  return absl::InternalError(
      absl::StrFormat("the daemon %s%s%s:\n%s", base::DescribeExit(exit_status_),
                      killed ? " (SIGKILL after SIGTERM did not end it)" : "",
                      left_mounted ? " and left its mount behind (detached now)" : "", LogText()));
}

std::string MountedDaemon::LogText() const {
  std::ifstream file(log_);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

}  // namespace ringfuse::tools
