// What ringfuse-bench handover and crash measured, summarized: one table, a row per figure and a
// column per tree size, each cell the median and the maximum over the runs.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "tools/percentile.h"

namespace ringfuse::tools {

// One restart (ringfuse-ctl restart), as the stat loop across it and ringfused's reply saw it.
struct HandoverSample {
  double client_max_us = 0;  // the longest stat call of the loop across the restart
  double cached_max_us = 0;  // the longest of those the kernel answered from its cache
  double round_trip_us = 0;  // the restart request, the successor's start included
  double pause_us = 0;       // ringfused's pause_us
  double save_us = 0;        // ringfused's save_us
  double state_bytes = 0;
  double state_fds = 0;
  double calls = 0;  // stat calls in the loop's window
  int failed_calls = 0;
};

// One crash (SIGKILL under ringfuse-ctl supervise), as the stat loop across it saw it, and the
// walks of the tree after it.
struct CrashSample {
  double client_max_us = 0;   // the longest stat call of the loop across the crash
  double cached_max_us = 0;   // the longest of those the kernel answered from its cache
  double recovery_us = 0;     // from the kill to a daemon answering the control socket
  double first_walk_us = 0;   // the walk after the recovery: names looked up again unless kept
  double cached_walk_us = 0;  // the walk after that one: the kernel's cache alone
  double calls = 0;
  int failed_calls = 0;
};

template <typename Sample>
struct ReplacementResult {
  int inodes = 0;  // in the tree below the root
  int nodes = 0;   // in the daemon's inode table after the walk, the root included
  std::vector<Sample> samples;
};
using HandoverResult = ReplacementResult<HandoverSample>;
using CrashResult = ReplacementResult<CrashSample>;

struct MedianAndMax {
  double median = 0;
  double max = 0;
};

// Over every sample of `samples` (nothing when empty: zeros).
template <typename Sample>
MedianAndMax Summarize(const std::vector<Sample>& samples, double Sample::*field) {
  std::vector<double> values;
  for (const Sample& sample : samples) values.push_back(sample.*field);
  if (values.empty()) return {};
  return {Percentile(values, 0.5), *std::max_element(values.begin(), values.end())};
}

// The tables, in Markdown.
std::string HandoverTable(const std::vector<HandoverResult>& results);
std::string CrashTable(const std::vector<CrashResult>& results);

}  // namespace ringfuse::tools
