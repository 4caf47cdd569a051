// Asks the kernel to drop nodes the daemon cannot close itself (NOTIFY_PRUNE, 7.45; queued,
// never blocking): nodes with neither handle nor name (inode_table.h), which keep their fd until
// FORGET. Past the table's open-node budget, the least recently used of them are named. Without
// PRUNE (an older kernel) nothing is sent, and those nodes stay open until FORGET.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>

#include "daemon/inodes/inode_table.h"

namespace ringfuse::daemon {

class NodePruner {
 public:
  // Sends one PRUNE of `nodeids`.
  using Send = std::function<void(std::span<const uint64_t> nodeids)>;

  explicit NodePruner(InodeTable& inodes) : inodes_(inodes) {}

  // Set once, right after Session::Start, where the kernel has PRUNE; until then nothing is sent.
  void Set(Send send);
  // After a lookup: when more nodes are pinned open than the table's open limit, names the
  // least recently used beyond half of it.
  void PruneIfTooManyPinned();

 private:
  InodeTable& inodes_;
  Send send_;  // set once by Set, then only read
  std::atomic<bool> set_{false};
  std::atomic<int64_t> last_prune_{0};  // steady_clock ticks of the last prune asked for
};

}  // namespace ringfuse::daemon
