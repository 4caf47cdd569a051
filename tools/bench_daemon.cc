#include "tools/bench_daemon.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/deadline.h"
#include "base/errno_status.h"
#include "base/fd.h"
#include "base/wait_status.h"
#include "daemon/control/control_socket.h"
#include "tools/bench_child.h"
#include "tools/bench_system.h"

namespace ringfuse::tools {
namespace {

// A publish of 8000 inodes by entries takes about 0.1 s; this only bounds a daemon that hangs.
constexpr absl::Duration kControlTimeout = absl::Seconds(60);
// Beyond the daemon's wait for its successor to get ready (HandoverOptions::takeover_timeout).
constexpr absl::Duration kRestartTimeout = absl::Seconds(90);
constexpr absl::Duration kStartTimeout = absl::Seconds(20);
constexpr absl::Duration kStopTimeout = absl::Seconds(20);
constexpr absl::Duration kPollInterval = absl::Milliseconds(10);

// In the child: ringfused with its output in the log (BecomeDaemonChild says why the rest).
[[noreturn]] void ExecDaemon(const DaemonLaunch& launch, int log_fd, pid_t benchmark) {
  BecomeDaemonChild(log_fd, benchmark);
  const std::string transport = "--transport=" + launch.transport;
  std::vector<const char*> argv;
  if (!launch.keeper.empty()) argv = {launch.keeper.c_str(), "supervise", "--"};
  argv.push_back(launch.binary.c_str());
  if (launch.revisions) argv.push_back("--revisions");
  for (const std::string* arg : {&launch.source, &launch.mountpoint}) argv.push_back(arg->c_str());
  argv.push_back("-f");
  argv.push_back(transport.c_str());
  for (const std::string& option : launch.mount_options) {
    argv.push_back("-o");
    argv.push_back(option.c_str());
  }
  argv.push_back(nullptr);
  ::execv(argv[0], const_cast<char* const*>(argv.data()));
  std::fprintf(stderr, "cannot run %s: %s\n", argv[0], std::strerror(errno));
  ::_exit(127);
}

}  // namespace

namespace {

// This program's directory with its slash, or "" if unknown.
std::string DirectoryOfThisProgram() {
  char self[PATH_MAX];
  const ssize_t length = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) return "";
  std::string path(self, static_cast<size_t>(length));
  path.resize(path.rfind('/') + 1);
  return path;
}

}  // namespace

std::string RingfusedNextToThisProgram() {
  const std::string directory = DirectoryOfThisProgram();
  return directory.empty() ? "ringfused" : directory + "../daemon/ringfused";
}

std::string CtlNextToThisProgram() { return DirectoryOfThisProgram() + "ringfuse-ctl"; }

absl::StatusOr<DaemonProcess> DaemonProcess::Start(const DaemonLaunch& launch) {
  base::UniqueFd log(::open(launch.log.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644));
  if (!log.valid()) return base::ErrnoStatus(errno, launch.log);
  const pid_t self = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return base::ErrnoStatus(errno, "fork");
  if (pid == 0) ExecDaemon(launch, log.get(), self);
  DaemonProcess daemon(pid, launch);
  if (absl::Status status = daemon.AwaitControl(); !status.ok()) return status;
  return daemon;
}

DaemonProcess::DaemonProcess(DaemonProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      exit_status_(other.exit_status_),
      launch_(std::move(other.launch_)) {}

DaemonProcess::~DaemonProcess() { (void)Stop(); }

absl::Status DaemonProcess::AwaitControl() {
  const base::Deadline deadline(kStartTimeout);
  while (!deadline.passed() && !StopRequested()) {
    if ((exit_status_ = ReapChild(pid_, false))) {
      return absl::UnavailableError(absl::StrFormat("%s %s before serving:\n%s", launch_.binary,
                                                    base::DescribeExit(exit_status_), LogText()));
    }
    if (daemon::SendControlRequest(launch_.mountpoint, "status", kControlTimeout).ok()) {
      return absl::OkStatus();
    }
    absl::SleepFor(kPollInterval);
  }
  if (StopRequested()) return absl::CancelledError("stopped by a signal");
  return absl::DeadlineExceededError(
      absl::StrFormat("%s did not serve %s within %s:\n%s", launch_.binary, launch_.mountpoint,
                      absl::FormatDuration(kStartTimeout), LogText()));
}

std::optional<int> DaemonProcess::EndChild() {
  if (exit_status_) return exit_status_;
  ::kill(pid_, SIGTERM);
  const base::Deadline deadline(kStopTimeout);
  while (!(exit_status_ = ReapChild(pid_, false)) && !deadline.passed()) {
    absl::SleepFor(kPollInterval);
  }
  if (!exit_status_) {
    ::kill(pid_, SIGKILL);
    exit_status_ = ReapChild(pid_, true);
  }
  return exit_status_;
}

absl::Status DaemonProcess::Stop() {
  if (pid_ < 0) return absl::OkStatus();
  const std::optional<int> status = EndChild();
  pid_ = -1;
  // EINVAL: the daemon unmounted, as it should have; nothing is left there.
  const bool left_mounted = ::umount2(launch_.mountpoint.c_str(), MNT_DETACH) == 0;
  if (base::ExitedCleanly(status) && !left_mounted) {
    return absl::OkStatus();
  }
  return absl::InternalError(
      absl::StrFormat("%s %s%s:\n%s", launch_.binary, base::DescribeExit(status),
                      left_mounted ? " and left its mount behind (detached now)" : "", LogText()));
}

absl::StatusOr<ControlAnswer> DaemonProcess::Ask(const std::string& request) const {
  return Ask(request, kControlTimeout);
}

absl::StatusOr<ControlAnswer> DaemonProcess::Ask(const std::string& request,
                                                 absl::Duration timeout) const {
  const base::Stopwatch stopwatch;
  absl::StatusOr<std::string> reply =
      daemon::SendControlRequest(launch_.mountpoint, request, timeout);
  const absl::Duration round_trip = stopwatch.elapsed();
  if (!reply.ok()) return reply.status();
  absl::StatusOr<daemon::ControlFields> fields = daemon::ParseControlReply(*reply);
  if (!fields.ok()) {
    return absl::Status(fields.status().code(),
                        absl::StrFormat("%s: %s", request, fields.status().message()));
  }
  return ControlAnswer{std::move(*fields), round_trip};
}

absl::StatusOr<ControlAnswer> DaemonProcess::Restart() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    return base::ErrnoStatus(errno, "becoming a child subreaper");
  }
  absl::StatusOr<ControlAnswer> answer = Ask("restart", kRestartTimeout);
  if (!answer.ok()) return answer.status();
  absl::StatusOr<double> successor = NumberField(answer->fields, "pid");
  if (!successor.ok()) return successor.status();
  if (absl::Status followed = FollowTo(static_cast<pid_t>(*successor)); !followed.ok()) {
    return followed;
  }
  return answer;
}

absl::Status DaemonProcess::FollowTo(pid_t successor) {
  const base::Deadline deadline(kStopTimeout);
  while (!(exit_status_ = ReapChild(pid_, false)) && !deadline.passed()) {
    absl::SleepFor(kPollInterval);
  }
  const pid_t predecessor = std::exchange(pid_, successor);
  const std::optional<int> ended = std::exchange(exit_status_, std::nullopt);
  if (!ended) {
    ::kill(predecessor, SIGKILL);
    ReapChild(predecessor, true);
    return absl::DeadlineExceededError(
        absl::StrFormat("ringfused (pid %d) still ran %s after handing the mount to pid %d",
                        predecessor, absl::FormatDuration(kStopTimeout), successor));
  }
  if (!base::ExitedCleanly(ended)) {
    return absl::InternalError(absl::StrFormat("ringfused (pid %d) %s after handing over:\n%s",
                                               predecessor, base::DescribeExit(ended), LogText()));
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::Duration> DaemonProcess::KillAndAwaitRecovery() {
  const std::string keeper = std::to_string(pid_);
  std::ifstream children("/proc/" + keeper + "/task/" + keeper + "/children");
  pid_t dead = -1;
  if (!(children >> dead)) return absl::FailedPreconditionError("the keeper runs no daemon");
  const base::Stopwatch since_kill;
  if (::kill(dead, SIGKILL) != 0) return base::ErrnoStatus(errno, "killing the daemon");
  const base::Deadline deadline(kStartTimeout);
  while (!deadline.passed()) {
    absl::StatusOr<ControlAnswer> status = Ask("status", kStartTimeout);
    absl::StatusOr<double> serving =
        status.ok() ? NumberField(status->fields, "pid") : absl::StatusOr<double>(-1);
    if (serving.ok() && *serving > 0 && static_cast<pid_t>(*serving) != dead) {
      return since_kill.elapsed();
    }
    if ((exit_status_ = ReapChild(pid_, false))) {
      return absl::UnavailableError(absl::StrFormat("the keeper %s after the kill:\n%s",
                                                    base::DescribeExit(exit_status_), LogText()));
    }
    absl::SleepFor(absl::Microseconds(200));
  }
  return absl::DeadlineExceededError(
      absl::StrFormat("no daemon served %s within %s of the kill:\n%s", launch_.mountpoint,
                      absl::FormatDuration(kStartTimeout), LogText()));
}

std::string DaemonProcess::TransportChoice() const {
  std::istringstream log(LogText());
  for (std::string line; std::getline(log, line);) {
    absl::string_view choice(line);
    if (absl::ConsumePrefix(&choice, "ringfused: ")) return std::string(choice);
  }
  return "(not reported)";
}

std::string DaemonProcess::LogText() const {
  std::ifstream file(launch_.log);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

absl::StatusOr<double> NumberField(const daemon::ControlFields& fields, const std::string& name) {
  auto found = fields.find(name);
  double value = 0;
  if (found == fields.end() || !absl::SimpleAtod(found->second, &value)) {
    return absl::DataLossError(absl::StrFormat("ringfused's reply has no number %s=", name));
  }
  return value;
}

}  // namespace ringfuse::tools
