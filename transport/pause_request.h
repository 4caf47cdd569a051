// Where the uring transport's Pause and its workers meet. Pause asks; each worker, on its own
// thread, stops reading and says when it has nothing in flight on /dev/fuse (settled); Pause
// waits, within a bound, until every worker has, and otherwise withdraws the request, upon which
// the workers read again.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>

#include "absl/time/time.h"
#include "base/deadline.h"

namespace ringfuse::internal {

class PauseRequest {
 public:
  // Pause's side.
  void Ask() { asked_.store(true, std::memory_order_relaxed); }
  void Withdraw() { asked_.store(false, std::memory_order_relaxed); }
  // Until `workers` have settled (true) or `bound` has passed (false), calling `nudge` every
  // millisecond meanwhile: a worker blocked in the kernel may need more than a wake-up.
  template <typename Nudge>
  bool WaitUntilSettled(size_t workers, absl::Duration bound, Nudge&& nudge) {
    const base::Deadline deadline(bound);
    std::unique_lock lock(mutex_);
    while (settled_ < workers) {
      if (deadline.passed()) return false;
      lock.unlock();
      nudge();
      lock.lock();
      changed_.wait_for(lock, std::chrono::milliseconds(1), [&] { return settled_ >= workers; });
    }
    return true;
  }
  size_t settled() const {
    std::lock_guard lock(mutex_);
    return settled_;
  }

  // A worker's side, on its own thread.
  bool asked() const { return asked_.load(std::memory_order_relaxed); }
  void Settle() {
    std::lock_guard lock(mutex_);
    ++settled_;
    changed_.notify_all();
  }
  void Unsettle() {
    std::lock_guard lock(mutex_);
    --settled_;
  }

 private:
  std::atomic<bool> asked_{false};
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  size_t settled_ = 0;
};

}  // namespace ringfuse::internal
