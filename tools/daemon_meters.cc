#include "tools/daemon_meters.h"

#include "tools/compare_run.h"
#include "tools/proc_stats.h"

namespace ringfuse::tools {

DaemonMeters::DaemonMeters(pid_t pid)
    : pid_(pid), contention_(ContentionMeter::Start(pid)), cpu_before_us_(ProcessCpuMicros(pid)) {}

void DaemonMeters::Stop() {
  cpu_us_ = ProcessCpuMicros(pid_) - cpu_before_us_;
  if (contention_.ok()) counts_ = contention_->Read();
}

std::vector<Metric> DaemonMeters::PerOperation(double operations) const {
  std::vector<Metric> metrics = {{kCpuMetric, cpu_us_ / operations}};
  if (!contention_.ok()) return metrics;
  metrics.push_back({kFutexWaitsMetric, static_cast<double>(counts_.futex_waits) / operations});
  metrics.push_back({kFutexWakesMetric, static_cast<double>(counts_.futex_wakes) / operations});
  metrics.push_back(
      {kSwitchesMetric, static_cast<double>(counts_.voluntary_switches) / operations});
  return metrics;
}

std::vector<std::string> DaemonMeters::Uncounted() const {
  if (contention_.ok()) return {};
  return {kFutexWaitsMetric, kFutexWakesMetric, kSwitchesMetric};
}

std::string DaemonMeters::WhyUncounted() const {
  return contention_.ok() ? "" : "n/a: " + std::string(contention_.status().message());
}

}  // namespace ringfuse::tools
