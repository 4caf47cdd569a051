// How many fds a process holds: the tests that check nothing leaks count them before and after.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
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

}  // namespace ringfuse::testing
