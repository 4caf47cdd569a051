// How many fds a process holds: the tests that check nothing leaks count them before and after.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

namespace ringfuse::testing {

// 0 for a process that is gone.
inline size_t OpenFdCount(pid_t pid = ::getpid()) {
  std::error_code error;
  const std::filesystem::directory_iterator fds("/proc/" + std::to_string(pid) + "/fd", error);
  if (error) return 0;
  return static_cast<size_t>(std::distance(fds, std::filesystem::directory_iterator()));
}

// The fds of `pid` that are not O_PATH (0 for a process that is gone). A daemon's O_PATH fds are
// its inode table's, one per node it holds open, which follow the nodes the kernel keeps and
// which the table's budget bounds; what is left leaks if it grows.
inline size_t OpenFdCountExceptPaths(pid_t pid) {
  size_t count = 0;
  std::error_code error;
  const std::string proc = "/proc/" + std::to_string(pid);
  for (const auto& fd : std::filesystem::directory_iterator(proc + "/fd", error)) {
    std::ifstream info(proc + "/fdinfo/" + fd.path().filename().string());
    std::string key;
    unsigned long flags = 0;
    while (info >> key && key != "flags:") info.ignore(4096, '\n');
    if (!(info >> std::oct >> flags)) continue;  // closed meanwhile
    if ((flags & O_PATH) == 0) ++count;
  }
  return count;
}

// What each of this process's fds is ("3 -> /dev/fuse", ...), one per line: for the message of a
// test that found more than it expected.
inline std::string DescribeOpenFds() {
  std::string lines;
  std::error_code error;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    lines += fd.path().filename().string() + " -> " +
             std::filesystem::read_symlink(fd.path(), error).string() + "\n";
  }
  return lines;
}

// Raises this process's soft fd limit to `fds` (at most the hard limit) while it lives: for a
// client that holds more files open than the default 1024.
class FdLimitGuard {
 public:
  explicit FdLimitGuard(rlim_t fds) {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit raised = saved_;
    raised.rlim_cur = std::min(std::max(fds, saved_.rlim_cur), saved_.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &raised);
  }
  ~FdLimitGuard() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
  FdLimitGuard(const FdLimitGuard&) = delete;
  FdLimitGuard& operator=(const FdLimitGuard&) = delete;

 private:
  rlimit saved_{};
};

}  // namespace ringfuse::testing
