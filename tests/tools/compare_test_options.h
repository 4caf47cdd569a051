// The options of a ringfuse-bench compare run as the report and check tests give them: a few
// workloads, thread counts and configs (by default native, ringfused a and b, and the floor,
// whose column is floor/auto), nothing run.
#pragma once

#include <string>
#include <vector>

#include "tools/compare_run.h"

namespace ringfuse::tools {

inline CompareOptions TestOptions(std::vector<std::string> workloads, std::vector<int> threads,
                                  const std::vector<std::string>& configs = {
                                      "native", "ringfused:name=a", "ringfused:name=b", "floor"}) {
  CompareOptions options;
  options.rounds = 1;
  options.workloads = std::move(workloads);
  options.threads = std::move(threads);
  const DaemonBinaries binaries{"ringfused", "self"};
  for (const std::string& text : configs) {
    options.configs.push_back(*ParseCompareConfig(text, binaries));
  }
  return options;
}

}  // namespace ringfuse::tools
