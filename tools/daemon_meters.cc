#include "tools/daemon_meters.h"

#include <unistd.h>

#include "tools/compare_run.h"
#include "tools/proc_stats.h"

namespace ringfuse::tools {
namespace {

double PerOp(uint64_t count, double operations) { return static_cast<double>(count) / operations; }

std::string WhyNot(const absl::Status& status) { return "n/a: " + std::string(status.message()); }

}  // namespace

DaemonMeters::DaemonMeters(pid_t pid)
    : pid_(pid),
      syscalls_(TracepointCounter::Start(ThreadsOf(pid), kSystemCallTracepoint)),
      contention_(ContentionMeter::Start(pid)),
      cpu_before_us_(ProcessCpuMicros(pid)) {}

void DaemonMeters::Stop() {
  // The system calls first: the reads below are system calls too, of this process, which the
  // count would take in where a process meters itself (as the tests do).
  if (syscalls_.ok()) syscall_count_ = syscalls_->Read();
  cpu_us_ = ProcessCpuMicros(pid_) - cpu_before_us_;
  if (contention_.ok()) counts_ = contention_->Read();
}

std::vector<Metric> DaemonMeters::PerOperation(double operations) const {
  std::vector<Metric> metrics = {{kCpuMetric, cpu_us_ / operations}};
  if (syscalls_.ok()) metrics.push_back({kSyscallsMetric, PerOp(syscall_count_, operations)});
  if (!contention_.ok()) return metrics;
  metrics.push_back({kFutexWaitsMetric, PerOp(counts_.futex_waits, operations)});
  metrics.push_back({kFutexWakesMetric, PerOp(counts_.futex_wakes, operations)});
  metrics.push_back({kSwitchesMetric, PerOp(counts_.voluntary_switches, operations)});
  return metrics;
}

std::vector<DaemonMeters::UncountedMetric> DaemonMeters::Uncounted() const {
  std::vector<UncountedMetric> uncounted;
  if (!syscalls_.ok()) uncounted.push_back({kSyscallsMetric, WhyNot(syscalls_.status())});
  if (contention_.ok()) return uncounted;
  for (const char* metric : {kFutexWaitsMetric, kFutexWakesMetric, kSwitchesMetric}) {
    uncounted.push_back({metric, WhyNot(contention_.status())});
  }
  return uncounted;
}

std::vector<std::string> UncountableHere() {
  std::vector<std::string> metrics;
  for (const DaemonMeters::UncountedMetric& uncounted : DaemonMeters(::getpid()).Uncounted()) {
    metrics.push_back(uncounted.metric);
  }
  return metrics;
}

}  // namespace ringfuse::tools
