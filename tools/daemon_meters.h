// What one workload of ringfuse-bench compare costs the daemon that serves it, per client
// operation: its CPU time (tools/proc_stats.h) and how much its threads waited for each other
// (tools/contention.h). The contention meter needs root and tracefs; without them the CPU time
// is still taken, and the contention figures say why they are missing.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/compare_workloads.h"
#include "tools/contention.h"

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

  // The figures that were not counted, and why ("n/a: ..."); none if all were.
  std::vector<std::string> Uncounted() const;
  std::string WhyUncounted() const;

 private:
  pid_t pid_;
  absl::StatusOr<ContentionMeter> contention_;
  double cpu_before_us_;
  double cpu_us_ = 0;
  ContentionCounts counts_;
};

}  // namespace ringfuse::tools
