// What ringfuse-bench handover measured, summarized: one table, a row per figure and a column per
// tree size, each cell the median and the maximum over the runs.
#pragma once

#include <string>
#include <vector>

namespace ringfuse::tools {

// One restart, as the stat loop across it and ringfused's reply saw it.
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

struct HandoverResult {
  int inodes = 0;  // in the tree below the root
  int nodes = 0;   // in the daemon's inode table after the walk, the root included
  std::vector<HandoverSample> samples;
};

struct MedianAndMax {
  double median = 0;
  double max = 0;
};

// Over every sample of `samples` (nothing when empty: zeros).
MedianAndMax Summarize(const std::vector<HandoverSample>& samples, double HandoverSample::*field);

// The table, in Markdown.
std::string HandoverTable(const std::vector<HandoverResult>& results);

}  // namespace ringfuse::tools
