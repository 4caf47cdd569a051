#include "daemon/inodes/node_pruner.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace ringfuse::daemon {

void NodePruner::Set(Send send) {
  send_ = std::move(send);
  set_.store(true, std::memory_order_release);
}

// Not at every lookup: the kernel's FORGETs take a while to arrive, and naming nodes again before
// they do would drop hot ones too. At twice the limit, sooner, before the fds run out.
void NodePruner::PruneIfTooManyPinned() {
  const size_t pinned = inodes_.pinned_count();
  const size_t limit = inodes_.open_limit();
  if (pinned <= limit || !set_.load(std::memory_order_acquire)) return;
  const auto interval =
      pinned > 2 * limit ? std::chrono::milliseconds(5) : std::chrono::milliseconds(50);
  const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
  int64_t last = last_prune_.load(std::memory_order_relaxed);
  if (now - last < std::chrono::nanoseconds(interval).count() ||
      !last_prune_.compare_exchange_strong(last, now)) {
    return;
  }
  const std::vector<uint64_t> nodeids = inodes_.UnclosableBeyond(limit / 2);
  // In notifications of a few hundred ids each: the kernel reads a PRUNE's ids in one go.
  constexpr size_t kIdsPerNotification = 256;
  for (size_t first = 0; first < nodeids.size(); first += kIdsPerNotification) {
    send_(std::span(nodeids).subspan(first, std::min(kIdsPerNotification, nodeids.size() - first)));
  }
}

}  // namespace ringfuse::daemon
