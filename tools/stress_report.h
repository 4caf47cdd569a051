// ringfuse-bench stress's results: the medians over the rounds by thread count, as a markdown
// table for people and as JSON for scripts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/contention.h"
#include "tools/stress_options.h"

namespace ringfuse::tools {

// One thread count's measurement in one round.
struct StressSample {
  int threads = 0;
  int round = 0;
  uint64_t requests = 0;  // handled in `seconds`, by all the threads
  double seconds = 0;
  std::optional<ContentionCounts> contention;  // none: the meter could not count
};

// One thread count's medians over the rounds; a per-op figure is missing where a sample lacks
// its counts.
struct StressRow {
  int threads = 0;
  double ops_per_second = 0;
  double speedup = 0;  // ops_per_second over that of the smallest thread count
  std::optional<double> futex_waits_per_op;
  std::optional<double> futex_wakes_per_op;
  std::optional<double> switches_per_op;
};

struct StressResults {
  StressOptions options;
  int requests_per_loop = 0;
  int cpus = 0;  // this process may run on
  std::vector<StressSample> samples;
  std::string meter_problem;  // why futex calls and switches were not counted; empty: they were
};

// A row per thread count of options.threads, in its order.
std::vector<StressRow> SummarizeStress(const StressResults& results);
std::string StressMarkdown(const StressResults& results);
std::string StressJson(const StressResults& results);

}  // namespace ringfuse::tools
