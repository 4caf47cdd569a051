#include "daemon/inodes/open_budget.h"

#include <chrono>

namespace ringfuse::daemon {
namespace {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

size_t OpenBudget::NowLowered(size_t lowered) const {
  if (SteadyNanos() >= lowered_until_.load(std::memory_order_relaxed)) {
    lowered_by_.store(0, std::memory_order_relaxed);  // a race with LowerTo only shortens it
    return limit_;
  }
  return limit_ - lowered;
}

void OpenBudget::LowerTo(size_t budget) {
  lowered_until_.store(SteadyNanos() + absl::ToInt64Nanoseconds(lowered_for_),
                       std::memory_order_relaxed);
  lowered_by_.store(limit_ - budget, std::memory_order_relaxed);
}

}  // namespace ringfuse::daemon
