// ringfuse-bench compare's rounds: for each round, each config in the given order (interleaved,
// so that a noisy neighbour hurts every column alike): a fresh source tree, a mount, every
// workload (stat and create at each --threads count) with the daemon's CPU time, system calls and
// contention (tools/daemon_meters.h) around it, the daemon's peak memory, unmount, cleanup.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/compare_configs.h"
#include "tools/compare_workloads.h"

namespace ringfuse::tools {

struct CompareOptions {
  int rounds = 3;
  absl::Duration seconds = absl::Seconds(5);  // per workload (randread: per job count)
  std::vector<std::string> workloads;
  std::vector<int> threads{kDefaultClientThreads};  // client threads of stat and create, rising
  int files = 10000;
  int big_file_mib = 512;
  std::string output_dir;  // the daemons' logs go here too
  std::vector<CompareConfig> configs;
};

// One measured value, or why there is none ("n/a", "error: ...").
struct Sample {
  int round = 0;
  std::string config;
  std::string workload;
  std::string metric;
  std::optional<double> value;
  std::string note;
  int threads = 0;  // the workload's client threads; 0 for a workload without a choice
};

// The pseudo-workload of the rows that concern the daemon as a whole.
inline constexpr const char* kDaemonWorkload = "daemon";
inline constexpr const char* kCpuMetric = "daemon_cpu_us_per_op";
inline constexpr const char* kSyscallsMetric = "daemon_syscalls_per_op";
inline constexpr const char* kFutexWaitsMetric = "daemon_futex_waits_per_op";
inline constexpr const char* kFutexWakesMetric = "daemon_futex_wakes_per_op";
inline constexpr const char* kSwitchesMetric = "daemon_voluntary_switches_per_op";
// What every workload of a daemon config measures of its daemon, per client operation.
inline constexpr const char* kDaemonPerOpMetrics[] = {
    kCpuMetric, kSyscallsMetric, kFutexWaitsMetric, kFutexWakesMetric, kSwitchesMetric};
inline constexpr const char* kRssMetric = "peak_rss_mib";
inline constexpr const char* kCleanStopMetric = "clean_stop";

// Every sample, in the order measured; stops early (with what it has) after SIGINT or SIGTERM.
std::vector<Sample> RunCompare(const CompareOptions& options);

}  // namespace ringfuse::tools
