// One thread's work in ringfuse-bench stress: what a process that opens and reads small files by
// path makes the kernel ask, with nothing cached. Each loop, for one file of the tree:
//   LOOKUP d, LOOKUP the file in d, GETATTR of it, OPEN O_RDONLY, READ of 4 KiB, RELEASE,
//   FORGET of each node looked up (nlookup 1)
// and every answer is checked: an error, a reply of the wrong size, an entry or attributes that
// are not the file's, or a READ that does not return exactly the file's bytes ends the loop.
#pragma once

#include <atomic>

#include "absl/status/status.h"
#include "tools/stress_kernel.h"

namespace ringfuse::tools {

inline constexpr int kRequestsPerLoop = 8;

// Thread `thread` of `threads` starts at its own share of the `files` files and goes on from
// there, so that the threads spread over the tree and meet only on d.
struct LoopPlan {
  int files = 0;
  int thread = 0;
  int threads = 1;
};

// Loops until `stop` is set. A failure sets it too, so that the other threads end with this one,
// and is returned.
absl::Status RunStressLoop(StressCaller& caller, const LoopPlan& plan, std::atomic<bool>& stop);

}  // namespace ringfuse::tools
