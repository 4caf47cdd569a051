// The workloads of ringfuse-bench compare, run on a mounted config (or on the plain source tree
// for `native`), each for a fixed time, each returning its metrics or the error that stopped it.
//
//   stat      N threads lstat the --files small files round-robin         ops_per_s
//   create    N threads create+close+unlink in their own directory        ops_per_s (1 op = the
//                                                                         three calls)
//   readdir   1 thread lists the small files' directory                   passes_per_s
//   null      1 thread stat()s one file                                   p50_us p99_us p999_us
//                                                                         ops_per_s
//   randread  4 KiB O_DIRECT preads at random aligned offsets of the big  iops_1job iops_2jobs
//             file, 1 then 2 threads
//   seqread   one pass of 1 MiB reads over the big file, evicted from the mib_per_s
//             page cache first (source and mount), within the time
//   seqwrite  1 MiB writes of a new file up to the big file's size or the mib_per_s
//             time, then fsync (counted: the data must have left the page cache)
//
// randread is written here rather than run with fio: 4 KiB preads at queue depth 1 need no
// engine, the benchmark needs no extra package, and the daemon's CPU time is taken around
// exactly the calls measured. The floor (the null filesystem, one file) serves only stat (of
// its one file) and null. N is each of --threads in turn (default 2): stat and create are the
// workloads whose scaling with client threads issue 21 asks about.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ringfuse::tools {

inline constexpr int kDefaultClientThreads = 2;

struct WorkloadTarget {
  std::string root;    // where the workload runs: the mountpoint, or the source tree (native)
  std::string source;  // the source tree, whose page cache seqread evicts
  int files = 0;
  int big_file_mib = 0;
  bool floor = false;  // the root is the null filesystem
  absl::Duration duration;
  int threads = kDefaultClientThreads;  // of the workloads that take a count (stat, create)
};

struct Metric {
  std::string name;
  double value = 0;
};

struct WorkloadResult {
  std::vector<Metric> metrics;
  double operations = 0;  // what the daemon's CPU time is divided by
};

// Every workload's name, in the order they run.
const std::vector<std::string>& WorkloadNames();
// The metric names a workload reports, in order.
std::vector<std::string> WorkloadMetricNames(const std::string& workload);
// The client thread counts `workload` runs at: `counts` for stat and create, {0} (no choice
// given) for the others.
std::vector<int> ThreadCounts(const std::string& workload, const std::vector<int>& counts);
// Whether the floor config can serve `workload`.
bool FloorServes(const std::string& workload);

absl::StatusOr<WorkloadResult> RunWorkload(const std::string& workload,
                                           const WorkloadTarget& target);

}  // namespace ringfuse::tools
