// SETLKW without a blocked worker thread.
//
// A worker blocked in F_OFD_SETLKW could hold up the very request that releases the lock (on
// uring-cmd, every request from one CPU goes through one queue and one thread), and a caller
// killed while waiting would stay in D state until the lock came free. So a wait that cannot be
// granted at once is handed to one thread that retries every pending lock without blocking, a
// few milliseconds apart, and answers when it is granted, fails, or the kernel interrupts the
// request. The price is that waiters are not served in order of arrival.
#pragma once

#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "protocol/handler.h"
#include "protocol/reply.h"

namespace ringfuse::daemon {

class LockWaiter {
 public:
  // Returns 0 when the lock is taken, EAGAIN while it is not free, another errno to fail.
  using Attempt = std::function<int()>;

  LockWaiter();
  // Pending waits are answered EINTR.
  ~LockWaiter();
  LockWaiter(const LockWaiter&) = delete;
  LockWaiter& operator=(const LockWaiter&) = delete;

  // Retries `attempt` until it is done, then answers the request. A request the kernel has
  // already interrupted (its INTERRUPT came before this call) is answered EINTR.
  void Wait(const RequestContext& context, Attempt attempt, EmptyReply reply);
  // The kernel interrupts request `unique`: if it is waiting here, it is answered EINTR.
  void Interrupt(uint64_t unique);
  // Waits not yet answered (for tests: a waiting caller is known to be blocked here).
  size_t pending() const;

 private:
  struct Pending {
    uint64_t unique;
    Attempt attempt;
    EmptyReply reply;
    bool interrupted = false;
  };

  void Run();
  bool HasWork() const ABSL_SHARED_LOCKS_REQUIRED(mutex_) { return stopping_ || !pending_.empty(); }
  // Retries each pending wait once; answers and removes those that are done.
  void RetryAll() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  mutable absl::Mutex mutex_;
  std::vector<Pending> pending_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace ringfuse::daemon
