// ringfuse-bench stress: many more threads than CPUs drive the real PassthroughFs through the
// library's dispatcher in-process (no kernel, no mount), to show what a lock the daemon's threads
// share costs even on 2 CPUs (issue 21). Over a temporary tree of --files small files
// (stress_tree.h), every round runs each thread count once, interleaved; the report gives the
// medians (stress_report.h).
#pragma once

#include "tools/stress_options.h"

namespace ringfuse::tools {

// The exit status: 0, 1 when the tree or INIT failed or a reply was wrong (said on stderr), 130
// when a stop signal ended the run between two measurements.
int RunStress(const StressOptions& options);

}  // namespace ringfuse::tools
