#include "tools/supervise.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <deque>
#include <string>

#include "absl/strings/str_format.h"
#include "base/deadline.h"
#include "base/errno_status.h"
#include "base/fd.h"
#include "base/wait_status.h"
#include "ringfuse/keeper.h"

namespace ringfuse::tools {
namespace {

constexpr int kForwardedSignals[] = {SIGTERM, SIGINT, SIGHUP};
// A daemon that keeps crashing is given up on: max_restarts within this window.
constexpr int kRestartWindowSeconds = 60;
constexpr auto kRestartWindow = std::chrono::seconds(kRestartWindowSeconds);
// A signal waits this long at most for a starting daemon to serve.
constexpr int kSignalHoldMs = 5000;
constexpr absl::Duration kSignalHold = absl::Milliseconds(kSignalHoldMs);
// For the rest of a message once its first part came.
constexpr int kReceiveTimeoutSeconds = 10;

void Say(const std::string& text) {
  std::fprintf(stderr, "ringfuse-ctl supervise: %s\n", text.c_str());
}

// The signals the daemon gets in our place, read from an fd so that one poll waits for them,
// the daemon, its messages and the connection.
class ForwardedSignals {
 public:
  ForwardedSignals() {
    sigemptyset(&set_);
    for (int signal : kForwardedSignals) sigaddset(&set_, signal);
    ::sigprocmask(SIG_BLOCK, &set_, nullptr);
    fd_.reset(::signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK));
  }
  int fd() const { return fd_.get(); }
  // The signal that arrived, or 0.
  int Take() {
    signalfd_siginfo info{};
    if (::read(fd_.get(), &info, sizeof(info)) != sizeof(info)) return 0;
    return static_cast<int>(info.ssi_signo);
  }

 private:
  sigset_t set_;
  base::UniqueFd fd_;
};

// One daemon's life: started, served (its deposit, its notes), ended.
class DaemonRun {
 public:
  DaemonRun(ConnectionKeeper& keeper, ForwardedSignals& signals)
      : keeper_(keeper), signals_(signals) {}

  // The daemon's wait status once it ended.
  absl::StatusOr<int> Run(const daemon::Program& program) {
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) {
      return base::ErrnoStatus(errno, "socketpair for the keeper");
    }
    socket_.reset(ends[0]);
    // A daemon that stops in the middle of a message must not stop the keeper with it.
    const timeval receive_timeout{kReceiveTimeoutSeconds, 0};
    ::setsockopt(socket_.get(), SOL_SOCKET, SO_RCVTIMEO, &receive_timeout, sizeof(receive_timeout));
    base::UniqueFd theirs(ends[1]);
    keeper_.NewDaemon();
    absl::StatusOr<pid_t> pid = daemon::SpawnWithSocket(program, "--keeper-fd=", theirs.get(),
                                                        /*new_session=*/false);
    if (!pid.ok()) return pid.status();
    pid_ = *pid;
    theirs.reset();  // so that the daemon's end shows as the end of the socket
    const base::UniqueFd ended(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));
    if (!ended.valid()) return base::ErrnoStatus(errno, "pidfd_open for the daemon");
    for (;;) {
      absl::StatusOr<bool> over = Ended(ended.get());
      if (!over.ok()) return over.status();
      if (*over) break;
    }
    int status = 0;
    pid_t waited;
    while ((waited = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    if (waited < 0) return base::ErrnoStatus(errno, "waiting for the daemon");
    return status;
  }
  bool signalled() const { return signalled_; }
  pid_t pid() const { return pid_; }

 private:
  // Waits for the next event and handles it; true once the daemon ended.
  absl::StatusOr<bool> Ended(int ended) {
    // Not the kept /dev/fuse fd: the kernel wakes whoever polls it at every request it queues,
    // whatever events were asked for. Whether the connection lives is asked once the daemon
    // ended; until then the daemon's own reads tell it of an unmount or an abort.
    pollfd fds[] = {{ended, POLLIN, 0}, {signals_.fd(), POLLIN, 0}, {socket_.get(), POLLIN, 0}};
    const int timeout = held_signal_ != 0 ? kSignalHoldMs : -1;
    if (::poll(fds, 3, timeout) < 0) {
      if (errno == EINTR) return false;
      return base::ErrnoStatus(errno, "waiting for the daemon");
    }
    // Messages first: a deposit or a note the daemon sent just before it died still counts.
    if (fds[2].revents != 0) Listen();
    if (fds[0].revents != 0) {
      while (socket_.valid() && Readable(socket_.get())) Listen();
      return true;
    }
    if (fds[1].revents != 0) Hold(signals_.Take());
    PassOn(held_signal_ != 0 && (keeper_.daemon_serves() || held_.elapsed() >= kSignalHold));
    return false;
  }

  static bool Readable(int fd) {
    pollfd ready{fd, POLLIN, 0};
    return ::poll(&ready, 1, 0) > 0;
  }

  // A signal that comes while the daemon starts waits until it serves: before ringfused has set
  // up its handlers, SIGTERM would kill it before it could unmount. A hangup asks the daemon to
  // stop as SIGTERM does (ringfused does not handle SIGHUP itself).
  void Hold(int signal) {
    if (signal == 0) return;
    signalled_ = true;
    held_signal_ = signal == SIGHUP ? SIGTERM : signal;
    held_ = base::Stopwatch();
  }
  void PassOn(bool now) {
    if (!now) return;
    ::kill(pid_, held_signal_);
    held_signal_ = 0;
  }

  // A daemon that closed its end, or broke the protocol, is not listened to again.
  void Listen() {
    const absl::Status served = keeper_.ServeOne(socket_.get());
    if (served.ok()) return;
    if (!absl::IsNotFound(served))
      Say(absl::StrFormat("daemon pid %d: %s", pid_, served.message()));
    socket_.reset();
  }

  ConnectionKeeper& keeper_;
  ForwardedSignals& signals_;
  base::UniqueFd socket_;
  pid_t pid_ = -1;
  bool signalled_ = false;
  int held_signal_ = 0;  // to pass on once the daemon serves
  base::Stopwatch held_;
};

int ExitCodeOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace

int Supervise(const SuperviseOptions& options) {
  // Inherited SIG_IGN would reap the daemon before waitpid could say how it ended.
  ::signal(SIGCHLD, SIG_DFL);
  ForwardedSignals signals;
  ConnectionKeeper keeper;
  std::deque<base::MonotonicClock::time_point> recent_restarts;
  for (;;) {
    DaemonRun run(keeper, signals);
    absl::StatusOr<int> status = run.Run(options.daemon);
    if (!status.ok()) {
      Say(std::string(status.status().message()));
      return 1;
    }
    const bool clean = WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
    if (clean || run.signalled()) return ExitCodeOf(*status);
    const std::string how =
        absl::StrFormat("the daemon (pid %d) %s", run.pid(), base::DescribeExit(*status));
    if (!keeper.holds_connection()) {
      Say(how + " before it served a mount: nothing to keep");
      return ExitCodeOf(*status);
    }
    if (!keeper.connection_alive()) return ExitCodeOf(*status);
    const base::MonotonicClock::time_point now = base::MonotonicClock::now();
    while (!recent_restarts.empty() && now - recent_restarts.front() > kRestartWindow) {
      recent_restarts.pop_front();
    }
    if (recent_restarts.size() >= static_cast<size_t>(options.max_restarts)) {
      Say(absl::StrFormat(
          "%s; giving up after %d restarts within %d s, so %s ends (clients get ENOTCONN)", how,
          recent_restarts.size(), kRestartWindowSeconds, keeper.mountpoint()));
      return 1;
    }
    recent_restarts.push_back(now);
    Say(absl::StrFormat("%s; starting it again to serve %s (restart %d of at most %d within %d s)",
                        how, keeper.mountpoint(), recent_restarts.size(), options.max_restarts,
                        kRestartWindowSeconds));
  }
}

}  // namespace ringfuse::tools
