// How much a process's threads wait for each other: its futex calls (those that may sleep and
// those that wake a sleeper) and its voluntary context switches, counted by the kernel. These do
// not depend on the machine's speed, so a lock shared by two threads shows on 2 CPUs as it would
// on 16: an uncontended lock makes no futex call at all.
//
// Futex calls come from the syscalls:sys_enter_futex tracepoint (tools/tracepoint_counter.h: one
// perf counter per thread, root and tracefs); switches from /proc/PID/task/*/status. Only the
// threads the process has at Start are counted: start the meter once its threads are running.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/tracepoint_counter.h"

namespace ringfuse::tools {

struct ContentionCounts {
  uint64_t futex_waits = 0;  // FUTEX_WAIT and FUTEX_WAIT_BITSET, private or not
  uint64_t futex_wakes = 0;  // FUTEX_WAKE, FUTEX_WAKE_BITSET and FUTEX_WAKE_OP
  uint64_t voluntary_switches = 0;
  uint64_t futex_calls() const { return futex_waits + futex_wakes; }
};

class ContentionMeter {
 public:
  // Counts from now on, for every thread `pid` has now (getpid(): this process).
  static absl::StatusOr<ContentionMeter> Start(pid_t pid);
  // What the counted threads did since Start (a thread that ended keeps its futex calls, not its
  // switches).
  ContentionCounts Read() const;

 private:
  ContentionMeter(pid_t pid, std::vector<pid_t> tids, TracepointCounter waits,
                  TracepointCounter wakes);
  uint64_t Voluntary() const;

  pid_t pid_;
  std::vector<pid_t> tids_;
  TracepointCounter waits_;
  TracepointCounter wakes_;
  uint64_t voluntary_at_start_;  // after pid_ and tids_, which Voluntary() reads to set it
};

}  // namespace ringfuse::tools
