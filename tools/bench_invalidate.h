// ringfuse-bench invalidate: what telling the kernel "everything you cached is stale" costs,
// per inode (INVAL_ENTRY per name and INVAL_INODE per node, one write each or batched through
// io_uring) against one INC_EPOCH, measured through the real ringfused on a real mount.
#pragma once

#include <string>
#include <vector>

namespace ringfuse::tools {

struct InvalidateConfig {
  std::vector<int> inode_counts;     // one tree, one daemon per count
  int runs = 100;                    // publishes per method and tree
  std::vector<std::string> methods;  // invalidation methods, interleaved within each run
  std::string transport;             // ringfused --transport=
  std::string ringfused;             // the daemon binary
};

// Runs the benchmark and prints its tables. Returns 0, or 1 when a publish failed or a walk
// showed that an invalidation did not happen (or that `none` invalidated), or 130 on a signal.
int RunInvalidate(const InvalidateConfig& config);

}  // namespace ringfuse::tools
