// ringfuse-bench notify-floor: what one notification costs when it finds nothing to do, the
// floor under any per-entry invalidation. It mounts the null filesystem in this process (its
// kernel caches hold nothing but the root) and times INVAL_INODE for node ids the kernel does
// not have and INVAL_ENTRY for names it never looked up, each answered ENOENT.
#pragma once

#include <string>

namespace ringfuse::tools {

struct NotifyFloorConfig {
  int count = 8000;  // messages of each kind per run
  int runs = 100;
  std::string transport = "auto";
};

// Prints per-message cost (median over runs) of each kind; returns the exit status.
int RunNotifyFloor(const NotifyFloorConfig& config);

}  // namespace ringfuse::tools
