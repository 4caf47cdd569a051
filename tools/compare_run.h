// ringfuse-bench compare's rounds: for each round, each config in the given order (interleaved,
// so that a noisy neighbour hurts every column alike): a fresh source tree, a mount, every
// workload with the daemon's CPU time around it, the daemon's peak memory, unmount, cleanup.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/compare_configs.h"

namespace ringfuse::tools {

struct CompareOptions {
  int rounds = 3;
  absl::Duration seconds = absl::Seconds(5);  // per workload (randread: per job count)
  std::vector<std::string> workloads;
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
};

// The pseudo-workload of the rows that concern the daemon as a whole.
inline constexpr const char* kDaemonWorkload = "daemon";
inline constexpr const char* kCpuMetric = "daemon_cpu_us_per_op";
inline constexpr const char* kRssMetric = "peak_rss_mib";
inline constexpr const char* kCleanStopMetric = "clean_stop";

// Every sample, in the order measured; stops early (with what it has) after SIGINT or SIGTERM.
std::vector<Sample> RunCompare(const CompareOptions& options);

}  // namespace ringfuse::tools
