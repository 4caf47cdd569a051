// Runs checks of the catalogue on transports and gathers the report: first a probe mount reads
// what the kernel offers at INIT, then each check runs on each transport asked for, or is
// "not offered" with the reason (a missing INIT flag, an older protocol minor, FUSE-over-io_uring
// switched off).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ringfuse/ringfuse.h"
#include "tools/conform/check.h"
#include "tools/conform/result.h"

namespace ringfuse::conform {

struct RunOptions {
  std::vector<TransportKind> transports;  // the transports to run each check on
  std::vector<const Check*> checks;       // the checks to run
  bool enable_uring = false;              // switch FUSE-over-io_uring on for the run (root only)
};

// The checks whose names match one of `patterns` (fnmatch globs, e.g. "notify.*"), or every
// check when there are none; an error names a pattern that matches nothing.
absl::StatusOr<std::vector<const Check*>> SelectChecks(const std::vector<std::string>& patterns);

// Reads the kernel's offer with a probe mount.
absl::StatusOr<KernelOffer> ProbeKernel();

// Runs one check on one transport against `offer`.
Result RunCheck(const Check& check, TransportKind transport, const KernelOffer& offer,
                std::vector<uint32_t>& opcodes_seen);

// Everything: the probe, then every check on every transport, each result printed to stderr as it
// comes.
absl::StatusOr<Report> RunCatalogue(const RunOptions& options);

}  // namespace ringfuse::conform
