// ringfuse-bench compare --check: what CI's smoke test asserts about a finished run, read back
// from the files it wrote, so that a run that lost a column or a file fails.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "tools/compare_run.h"

namespace ringfuse::tools {

// results.md and chart.svg exist and are not empty (and with two --threads counts or more,
// scaling.svg and results.md's Scaling section), and results.csv has a number for every workload
// metric of native and of each ringfused config at each thread count (and the daemon's CPU per
// operation, peak RSS and clean stop for the ringfused ones) in every round. With
// `contention_metered` (the meter of tools/contention.h works here: root, tracefs), the ringfused
// configs need their futex and switch counts too; without it those are "n/a: why" and not asked
// for. Errors name what is missing.
absl::Status CheckOutput(const CompareOptions& options, bool contention_metered);

}  // namespace ringfuse::tools
