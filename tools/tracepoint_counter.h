// How many times some threads pass one kernel tracepoint (syscalls/sys_enter_futex: a futex
// call; raw_syscalls/sys_enter: any system call), counted by the kernel with one perf counter per
// thread. An exact count, not a sample: it does not depend on the machine's speed.
//
// The tracepoint's id comes from tracefs (mounted on /sys/kernel/tracing here if it is not), and
// opening the counters on another process's threads takes root: without either, Start says why.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/fd.h"

namespace ringfuse::tools {

// Any system call, entered: what the daemon's system calls per operation are counted on.
inline constexpr const char* kSystemCallTracepoint = "raw_syscalls/sys_enter";

// The threads `pid` has now (getpid(): this process's); none if it is gone.
std::vector<pid_t> ThreadsOf(pid_t pid);

class TracepointCounter {
 public:
  // Counts from now on each time one of `tids` passes `tracepoint` ("category/name", as under
  // tracefs's events/) with arguments that match `filter` (tracefs's filter syntax, "op == 0";
  // empty: every time). Threads started later are not counted.
  static absl::StatusOr<TracepointCounter> Start(const std::vector<pid_t>& tids,
                                                 const std::string& tracepoint,
                                                 const std::string& filter = "");

  // The count since Start, all threads summed (a thread that ended keeps what it made).
  uint64_t Read() const;

 private:
  TracepointCounter() = default;

  std::vector<base::UniqueFd> per_thread_;
};

}  // namespace ringfuse::tools
