#include "tools/stress_run.h"

#include <fcntl.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "daemon/fs/passthrough_fs.h"
#include "daemon/inodes/mutex_mode.h"
#include "tools/bench_system.h"
#include "tools/stress_kernel.h"
#include "tools/stress_loop.h"
#include "tools/stress_measure.h"
#include "tools/stress_report.h"
#include "tools/stress_tree.h"

namespace ringfuse::tools {
namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "ringfuse-bench stress: %s\n", what.c_str());
  return 1;
}

int CpusAvailable() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  return ::sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 0;
}

// Every round, each thread count once; false (said on stderr) when a reply was wrong.
bool RunRounds(StressKernel& kernel, StressResults& results) {
  const StressOptions& options = results.options;
  for (int round = 1; round <= options.rounds; ++round) {
    for (const int threads : options.threads) {
      if (StopRequested()) return true;
      absl::StatusOr<StressMeasurement> measured =
          MeasureStress(kernel, threads, options.files, absl::Seconds(options.seconds));
      if (!measured.ok()) {
        Fail(absl::StrCat("round ", round, ", threads=", threads, ": ",
                          measured.status().message()));
        return false;
      }
      measured->sample.round = round;
      if (!measured->meter.ok() && results.meter_problem.empty()) {
        results.meter_problem = std::string(measured->meter.message());
      }
      std::fprintf(stderr, "ringfuse-bench stress: round %d, threads=%d: %.0f ops/s\n", round,
                   threads, measured->sample.requests / measured->sample.seconds);
      results.samples.push_back(measured->sample);
    }
  }
  return true;
}

}  // namespace

int RunStress(const StressOptions& options) {
  daemon::TurnOffMutexDeadlockGraph();  // as ringfused does before it serves
  absl::StatusOr<StressTree> tree = StressTree::Create(options.dir, options.files);
  if (!tree.ok()) return Fail(std::string(tree.status().message()));
  daemon::DaemonOptions daemon_options;
  daemon_options.source = tree->path();
  daemon::PassthroughFs fs(base::UniqueFd(::open(tree->path().c_str(), O_PATH | O_CLOEXEC)),
                           daemon_options);
  StressKernel kernel(fs, *std::max_element(options.threads.begin(), options.threads.end()));
  if (absl::Status init = kernel.Init(); !init.ok()) {
    return Fail("INIT: " + std::string(init.message()));
  }
  StressResults results{options, kRequestsPerLoop, CpusAvailable(), {}, ""};
  if (!RunRounds(kernel, results)) return 1;
  std::printf("%s", StressMarkdown(results).c_str());
  if (!options.json.empty()) {
    std::ofstream file(options.json, std::ios::trunc);
    file << StressJson(results);
    file.close();
    if (!file) return Fail("cannot write " + options.json);
  }
  return StopRequested() ? 130 : 0;
}

}  // namespace ringfuse::tools
