// How many reopenable nodes the inode table keeps open: its open limit, less what opens that ran
// out of fds took back (InodeTable::GiveBack), for a while, so that the fds stay with whoever ran
// out rather than go back to the nodes at the next lookup.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "absl/time/time.h"

namespace ringfuse::daemon {

class OpenBudget {
 public:
  // `lowered_for`: how long LowerTo holds.
  OpenBudget(size_t limit, absl::Duration lowered_for) : limit_(limit), lowered_for_(lowered_for) {}

  size_t limit() const { return limit_; }
  // The budget now. Read at every lookup: the clock only while lowered.
  size_t now() const {
    const size_t lowered = lowered_by_.load(std::memory_order_relaxed);
    return lowered == 0 ? limit_ : NowLowered(lowered);
  }
  // The budget is `budget` (at most limit()) for the next lowered_for.
  void LowerTo(size_t budget);

 private:
  // now() while lowered by `lowered`: the limit again once lowered_until_ has passed.
  size_t NowLowered(size_t lowered) const;

  const size_t limit_;
  const absl::Duration lowered_for_;
  // What LowerTo took off the limit, until the steady clock (in ns) passes lowered_until_.
  mutable std::atomic<size_t> lowered_by_{0};
  std::atomic<int64_t> lowered_until_{0};
};

}  // namespace ringfuse::daemon
