// What ringfuse-bench invalidate measured, summarized, and the tables it prints next to the
// published seed figures.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tools/bench_tree.h"

namespace ringfuse::tools {

// One publish as the daemon reported it, and what the walk after it saw.
struct PublishSample {
  double invalidate_us = 0;  // measured by ringfused: sending until the kernel took it all
  double round_trip_us = 0;  // measured here: the control request, switch included
  double switch_us = 0;      // measured by ringfused: the root switch, collecting the names
  double entries = 0;        // names the kernel could hold
  double inodes = 0;         // nodes the kernel had not forgotten
  double messages = 0;
  double not_cached = 0;     // messages the kernel answered with "not cached" (ENOENT)
  double lookups_after = 0;  // LOOKUPs the next walk of the whole tree cost
};

struct TreeResult {
  int inodes = 0;
  Tree tree;
  std::string transport_choice;  // as ringfused reported it
  std::map<std::string, std::vector<PublishSample>> by_method;
  int failed_checks = 0;  // walks that contradicted what their publish's method promises
};

// Prints, per method (rows) and tree size (columns): invalidate_us and the round trip, each as
// mean / p99 / median, with the seed figures and ratios; then what each publish concerned.
void PrintTables(const std::vector<TreeResult>& results, const std::vector<std::string>& methods,
                 int runs);

}  // namespace ringfuse::tools
