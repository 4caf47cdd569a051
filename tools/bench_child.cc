#include "tools/bench_child.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace ringfuse::tools {

void BecomeDaemonChild(int log_fd, pid_t benchmark) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != benchmark) ::_exit(127);  // it died before the line above
  ::dup2(log_fd, STDOUT_FILENO);
  ::dup2(log_fd, STDERR_FILENO);
}

std::optional<int> ReapChild(pid_t pid, bool block) {
  int status = 0;
  pid_t done;
  do {
    done = ::waitpid(pid, &status, block ? 0 : WNOHANG);
  } while (done < 0 && errno == EINTR);
  if (done != pid) return std::nullopt;
  return status;
}

}  // namespace ringfuse::tools
