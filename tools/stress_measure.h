// One thread count of ringfuse-bench stress measured: its threads started and parked, the
// contention meter started on them, the threads released into their loops for the given time,
// and the meter and the request counts read while the threads are still alive (the meter counts
// only the threads there are at its start, and a thread that ended loses its switches).
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/stress_kernel.h"
#include "tools/stress_report.h"

namespace ringfuse::tools {

struct StressMeasurement {
  StressSample sample;
  absl::Status meter;  // why the sample has no contention counts
};

// `threads` loops over `files` files through `kernel` for `duration`. An error when a loop
// failed: a reply was wrong.
absl::StatusOr<StressMeasurement> MeasureStress(StressKernel& kernel, int threads, int files,
                                                absl::Duration duration);

}  // namespace ringfuse::tools
