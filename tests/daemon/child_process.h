// Running a piece of a test in a forked child (another lock owner, another user), bounded in time.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>

namespace ringfuse::daemon {

// A child started now and reaped later, for two processes acting at once. One not joined (a
// fatal assertion returned early) is killed and reaped when it goes out of scope.
//
// The daemon serves from this very process, so the child first closes every fd but stdio and
// `keep_fd`: a copy of one of the daemon's fds would keep its open file, and the locks held
// there, alive for as long as the child lives.
class Child {
 public:
  explicit Child(const std::function<int()>& body, int keep_fd = -1) : pid_(::fork()) {
    if (pid_ != 0) return;
    if (keep_fd > 3) ::close_range(3, static_cast<unsigned>(keep_fd) - 1, 0);
    ::close_range(static_cast<unsigned>(std::max(keep_fd + 1, 3)), ~0u, 0);
    ::_exit(body());
  }
  // Bounded too: a child the daemon never answers must not hang the test past its end.
  ~Child() { Kill(); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }

  // The child's wait status once it has exited within `bound`, or nothing while it still runs.
  std::optional<int> Wait(std::chrono::milliseconds bound) {
    if (pid_ <= 0) return std::nullopt;
    const auto deadline = std::chrono::steady_clock::now() + bound;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    pid_ = -1;
    return status;
  }

  // The child's exit code, or -1 when it has not exited within `bound` (then killed).
  int Join(std::chrono::milliseconds bound = std::chrono::seconds(10)) {
    const std::optional<int> status = Wait(bound);
    if (!status) {
      Kill();
      return -1;
    }
    return WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
  }

 private:
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    Wait(std::chrono::seconds(10));
  }

  pid_t pid_;
};

// Runs `body` in a child and returns what it returned (0..255), or -1 if it did not exit within
// `bound` or died otherwise. The child should only make system calls, with strings made before
// the fork: the parent is threaded, and a lock another thread held at the fork (the sanitizers'
// allocator has no fork handler) is never released in the child.
inline int RunInChild(const std::function<int()>& body, int keep_fd = -1,
                      std::chrono::milliseconds bound = std::chrono::seconds(10)) {
  return Child(body, keep_fd).Join(bound);
}

}  // namespace ringfuse::daemon
