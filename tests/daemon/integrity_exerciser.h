// A randomized data-integrity exerciser: from a seed, it runs a sequence of writes, truncations,
// appends, reads, mappings, O_DIRECT transfers, fsyncs and reopens on a few files in a directory,
// checks every read and size against an in-memory model, and stops at the first disagreement
// with a report that says where, what, after which operations, and how to replay the run.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tests/daemon/integrity_model.h"
#include "tests/daemon/integrity_ops.h"

namespace ringfuse::integrity {

struct ExerciserOptions {
  std::string directory;  // the files are created there, as file-0, file-1, ...
  uint64_t seed = 1;
  int operations = 1000;
  OpKinds kinds = AllOpKinds();
  int files = 3;
  uint64_t max_file_size = 1 << 20;  // no operation starts past it
  // Test-only: runs after each step, so that a test can change a file behind the exerciser's
  // back and see the change reported.
  std::function<void(int step)> after_step;
};

struct ExerciserReport {
  bool ok() const { return failure.empty(); }

  // Empty when every check passed; otherwise the seed, the failing step, the last operations,
  // and the first difference.
  std::string failure;
  // The step that failed: `operations` for the comparison of whole files after the last step,
  // -1 when the files could not even be created and opened (or nothing failed).
  int failed_step = -1;
  std::optional<Difference> difference;  // when data or a size disagreed with the model
  // The operation kinds the directory refused (O_DIRECT, shared mappings), and why.
  OpKinds refused;
  std::vector<std::string> skipped;
};

ExerciserReport RunExerciser(const ExerciserOptions& options);

std::string ExerciserFileName(int file);

}  // namespace ringfuse::integrity
