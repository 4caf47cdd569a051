// ringfuse-bench compare --check: what CI's smoke test asserts about a finished run, read back
// from the files it wrote, so that a run that lost a column or a file fails.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/compare_run.h"

namespace ringfuse::tools {

// results.md and chart.svg exist and are not empty (and with two --threads counts or more,
// scaling.svg and results.md's Scaling section), and results.csv has a number for every workload
// metric of native and of each ringfused config at each thread count (and the daemon's CPU per
// operation, peak RSS and clean stop for the ringfused ones) in every round. The ringfused
// configs need their system call, futex and switch counts too, but those in `uncountable`
// (UncountableHere() of tools/daemon_meters.h: without root or tracefs they are "n/a: why").
// Errors name what is missing.
absl::Status CheckOutput(const CompareOptions& options,
                         const std::vector<std::string>& uncountable);

}  // namespace ringfuse::tools
