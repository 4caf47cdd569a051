#include "daemon/detach.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/errno_status.h"
#include "ringfuse/log.h"

namespace ringfuse::daemon {
namespace {

// The verdict is "ok" or the error message; end of file without either means the daemon died.
// SIGINT or SIGTERM (blocked since StopSignals; read here through a signalfd) while waiting pass
// a SIGTERM on to the daemon, which unmounts as soon as it serves, and end the command.
[[noreturn]] void WaitForVerdict(std::string_view program, base::UniqueFd verdict, pid_t daemon) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  base::UniqueFd signals(::signalfd(-1, &stop, SFD_CLOEXEC));
  std::string message;
  char buffer[512];
  for (;;) {
    pollfd fds[2] = {{verdict.get(), POLLIN, 0}, {signals.get(), POLLIN, 0}};
    if (::poll(fds, signals.valid() ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0) {
      ::kill(daemon, SIGTERM);
      std::fprintf(stderr, "%.*s: interrupted; the daemon stops\n",
                   static_cast<int>(program.size()), program.data());
      std::_Exit(130);
    }
    const ssize_t n = ::read(verdict.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    message.append(buffer, static_cast<size_t>(n));
  }
  if (message == "ok") std::_Exit(0);
  if (message.empty()) message = "the daemon exited before the mount was ready";
  std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(program.size()), program.data(),
               message.c_str());
  std::_Exit(1);
}

void WriteVerdict(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

absl::StatusOr<DetachedDaemon> Detach(std::string_view program) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return base::ErrnoStatus(errno, "pipe");
  base::UniqueFd read_end(fds[0]), write_end(fds[1]);
  const pid_t child = ::fork();
  if (child < 0) return base::ErrnoStatus(errno, "fork");
  if (child > 0) {
    write_end.reset();
    WaitForVerdict(program, std::move(read_end), child);
  }
  ::setsid();
  return DetachedDaemon(std::move(write_end));
}

void DetachedDaemon::Ready() {
  if (!verdict_.valid()) return;
  // So that the daemon's working directory pins no filesystem.
  if (::chdir("/") != 0) LogLine(LogLevel::kWarning, "cannot change directory to /");
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    for (const int stream : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) ::dup2(null, stream);
    ::close(null);
  }
  WriteVerdict(verdict_.get(), "ok");
  verdict_.reset();
}

void DetachedDaemon::Failed(std::string_view message) {
  if (!verdict_.valid()) return;
  WriteVerdict(verdict_.get(), message.empty() ? "failed" : message);
  verdict_.reset();
}

}  // namespace ringfuse::daemon
