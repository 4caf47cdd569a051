// What one workload of ringfuse-bench compare costs the daemon that serves it, per client
// operation: its CPU time (tools/proc_stats.h), its system calls (tools/tracepoint_counter.h) and
// how much its threads waited for each other (tools/contention.h). The system calls and the
// contention need root and tracefs; without them the CPU time is still taken, and the figures
// that are missing say why.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/compare_workloads.h"
#include "tools/contention.h"
#include "tools/tracepoint_counter.h"

namespace ringfuse::tools {

class DaemonMeters {
 public:
  // Counts from now on; the daemon's threads must be running (they are once it has mounted).
  explicit DaemonMeters(pid_t pid);

  // Ends the counting: call it as soon as the workload is done.
  void Stop();

  // The figures of kDaemonPerOpMetrics (tools/compare_run.h) that were counted, divided by
  // `operations`.
  std::vector<Metric> PerOperation(double operations) const;

  // A figure of kDaemonPerOpMetrics that was not counted, and why ("n/a: ...").
  struct UncountedMetric {
    std::string metric;
    std::string why;
  };
  // None if every figure was counted.
  std::vector<UncountedMetric> Uncounted() const;

 private:
  pid_t pid_;
  absl::StatusOr<TracepointCounter> syscalls_;
  absl::StatusOr<ContentionMeter> contention_;
  double cpu_before_us_;
  double cpu_us_ = 0;
  uint64_t syscall_count_ = 0;
  ContentionCounts counts_;
};

// The figures of kDaemonPerOpMetrics that DaemonMeters cannot count on this machine (without
// root or tracefs): what `ringfuse-bench compare --check` does not ask for.
std::vector<std::string> UncountableHere();

}  // namespace ringfuse::tools
