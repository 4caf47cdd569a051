// SETLKW without a blocked worker thread.
//
// A worker blocked in F_OFD_SETLKW could hold up the very request that releases the lock (on
// uring-cmd, every request from one CPU goes through one queue and one thread), and a caller
// killed while waiting would stay in D state until the lock came free. So a wait that cannot be
// granted at once is handed to one thread that retries pending locks without blocking, and
// answers when the lock is granted, the attempt fails, or the kernel interrupts the request. The
// price is that waiters are not served in order of arrival.
//
// Retries back off, per wait: the first comes 1 ms after the wait began, and each interval
// doubles, up to 64 ms, so a lock held for long costs about 16 attempts a second per waiter.
// Whenever a wait is granted every other wait is retried 1 ms later and backs off from there
// again: a lock changed hands, and its new holder often releases it soon. An INTERRUPT is
// answered at once, not at the next retry. Attempts run without the mutex, so Wait() and
// Interrupt(), called by request handlers, never wait for them.
//
// Caps: at most kMaxWaits waits at once, at most kMaxWaitsPerUser of them by one user (its
// account: accountable_user.h, so that a user's subordinate uids count as the user). A
// wait beyond either is answered ENOLCK at once, which fcntl(2) documents for a lock table that
// is full. Every wait keeps the transport's hold on its request (on uring-cmd a ring entry of
// the caller's CPU, and all may come from one CPU), so kMaxWaits stays below what one uring-cmd
// queue can hold unanswered while it still serves other requests (checked in lock_waiter.cc);
// the other transports hold nothing for a request answered late.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/deadline.h"
#include "base/errno.h"
#include "daemon/access/accountable_user.h"
#include "ringfuse/handler.h"
#include "ringfuse/reply.h"

namespace ringfuse::daemon {

class LockWaiter {
 public:
  static constexpr size_t kMaxWaits = 512;
  static constexpr size_t kMaxWaitsPerUser = 128;

  // Returns no error when the lock is taken, kNotYet while it is not free, another error to fail.
  using Attempt = std::function<base::Errno()>;
  static constexpr base::Errno kNotYet{EAGAIN};

  LockWaiter();
  // Pending waits are answered EINTR.
  ~LockWaiter();
  LockWaiter(const LockWaiter&) = delete;
  LockWaiter& operator=(const LockWaiter&) = delete;

  // Retries `attempt` until it is done, then answers the request. A request the kernel has
  // already interrupted (its INTERRUPT came before this call) is answered EINTR; one beyond the
  // caps, ENOLCK.
  void Wait(const RequestContext& context, Attempt attempt, EmptyReply reply);
  // The kernel interrupts request `unique`: if it is waiting here, it is answered EINTR.
  void Interrupt(uint64_t unique);
  // Waits not yet answered (for tests: a waiting caller is known to be blocked here).
  size_t pending() const;

 private:
  struct Pending {
    uint64_t unique;
    Account account;
    Attempt attempt;  // used by the waiter's thread alone
    EmptyReply reply;
    bool interrupted;
    base::MonotonicClock::duration interval;
    base::MonotonicClock::time_point next_try;
    base::Errno result = kNotYet;
  };
  using Waits = std::vector<std::shared_ptr<Pending>>;
  using Lock = std::unique_lock<std::mutex>;

  void Run();
  // The earliest retry due, or the end of time when nothing waits. Called with the mutex held, as
  // are RetryDue and Remove.
  base::MonotonicClock::time_point NextTry() const;
  // Retries the waits that are due once, without the mutex while they run; removes those that
  // are done and returns them.
  Waits RetryDue(Lock& lock);
  // Takes `done` out of the pending waits; after a grant, retries the others soon.
  void Remove(const Waits& done);
  // Under the mutex: wakes the waiter's thread to look at the waits again.
  void Wake();
  static void Answer(Pending& wait);

  // The members below it are guarded by mutex_. A wait ends by the monotonic clock: absl::Mutex
  // waits (in the Abseil of Debian 12) end by the wall clock, which may jump.
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  Waits pending_;
  absl::flat_hash_map<Account, size_t> waits_by_user_;
  bool woken_ = false;  // a wait came, was interrupted, or stopping_
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ringfuse::daemon
