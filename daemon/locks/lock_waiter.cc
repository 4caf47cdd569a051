#include "daemon/locks/lock_waiter.h"

#include <algorithm>
#include <cerrno>

#include "ringfuse/handler.h"

namespace ringfuse::daemon {
namespace {

constexpr std::chrono::milliseconds kFirstRetry{1};
constexpr std::chrono::milliseconds kLongestRetry{64};

static_assert(LockWaiter::kMaxWaits <= kMaxLateRequestsPerQueue,
              "waits that all come from one CPU must leave its uring-cmd queue free entries");
static_assert(LockWaiter::kMaxWaitsPerUser <= LockWaiter::kMaxWaits);

}  // namespace

LockWaiter::LockWaiter() : thread_(&LockWaiter::Run, this) {}

LockWaiter::~LockWaiter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    Wake();
  }
  thread_.join();
}

// The dispatcher marks a request interrupted before it calls Interrupt, which takes the mutex:
// so either the mark is seen here, under the mutex, or Interrupt comes after and finds the
// request pending. Either way the INTERRUPT is not lost.
void LockWaiter::Wait(const RequestContext& context, Attempt attempt, EmptyReply reply) {
  const Account account = AccountOf(context);
  {
    std::lock_guard lock(mutex_);
    if (pending_.size() < kMaxWaits && waits_by_user_[account] < kMaxWaitsPerUser) {
      pending_.push_back(std::make_shared<Pending>(
          Pending{context.header.unique, account, std::move(attempt), std::move(reply),
                  context.Interrupted(), kFirstRetry, base::MonotonicClock::now() + kFirstRetry}));
      ++waits_by_user_[account];  // counted once it is pending: a failed allocation leaves none
      Wake();
      return;
    }
    if (waits_by_user_[account] == 0) waits_by_user_.erase(account);
  }
  attempt = nullptr;  // what it holds goes before the answer, as in Answer()
  reply.Error(ENOLCK);
}

void LockWaiter::Interrupt(uint64_t unique) {
  std::lock_guard lock(mutex_);
  for (const std::shared_ptr<Pending>& wait : pending_) {
    if (wait->unique != unique) continue;
    wait->interrupted = true;
    Wake();
  }
}

size_t LockWaiter::pending() const {
  std::lock_guard lock(mutex_);
  return pending_.size();
}

void LockWaiter::Wake() {
  woken_ = true;
  changed_.notify_one();
}

void LockWaiter::Run() {
  Lock lock(mutex_);
  while (true) {
    changed_.wait_until(lock, NextTry(), [this] { return woken_; });
    woken_ = false;
    if (stopping_) break;
    const Waits done = RetryDue(lock);
    if (done.empty()) continue;
    // Answered without the mutex: an answer goes to the transport, which need not wait for us.
    lock.unlock();
    for (const std::shared_ptr<Pending>& wait : done) Answer(*wait);
    lock.lock();
  }
  for (const std::shared_ptr<Pending>& wait : pending_) {
    wait->result = base::Errno(EINTR);
    Answer(*wait);
  }
  pending_.clear();
}

base::MonotonicClock::time_point LockWaiter::NextTry() const {
  base::MonotonicClock::time_point next = base::MonotonicClock::time_point::max();
  for (const std::shared_ptr<Pending>& wait : pending_) {
    // An interrupted wait is due at once: the clock's epoch is always past.
    next = std::min(next, wait->interrupted ? base::MonotonicClock::time_point() : wait->next_try);
  }
  return next;
}

LockWaiter::Waits LockWaiter::RetryDue(Lock& lock) {
  const base::MonotonicClock::time_point now = base::MonotonicClock::now();
  Waits due;
  std::vector<bool> interrupted;
  for (const std::shared_ptr<Pending>& wait : pending_) {
    if (!wait->interrupted && wait->next_try > now) continue;
    due.push_back(wait);
    interrupted.push_back(wait->interrupted);
  }
  // Each attempt is one non-blocking fcntl, but there may be hundreds: Wait() and Interrupt()
  // do not wait for them. The waits stay pending meanwhile, so an Interrupt still finds them.
  lock.unlock();
  for (size_t i = 0; i < due.size(); ++i) {
    due[i]->result = interrupted[i] ? base::Errno(EINTR) : due[i]->attempt();
  }
  lock.lock();

  const base::MonotonicClock::time_point after = base::MonotonicClock::now();
  Waits done;
  for (const std::shared_ptr<Pending>& wait : due) {
    if (wait->result == kNotYet && wait->interrupted) wait->result = base::Errno(EINTR);
    if (wait->result != kNotYet) {
      done.push_back(wait);
      continue;
    }
    wait->interval = std::min<base::MonotonicClock::duration>(wait->interval * 2, kLongestRetry);
    wait->next_try = after + wait->interval;
  }
  Remove(done);
  return done;
}

void LockWaiter::Remove(const Waits& done) {
  bool granted = false;
  for (const std::shared_ptr<Pending>& wait : done) {
    granted |= wait->result.ok();
    if (--waits_by_user_[wait->account] == 0) waits_by_user_.erase(wait->account);
  }
  // Only a wait that is done has a result other than "not yet".
  std::erase_if(pending_,
                [](const std::shared_ptr<Pending>& wait) { return wait->result != kNotYet; });
  if (!granted) return;
  const base::MonotonicClock::time_point soon = base::MonotonicClock::now() + kFirstRetry;
  for (const std::shared_ptr<Pending>& wait : pending_) {
    wait->interval = kFirstRetry;
    wait->next_try = std::min(wait->next_try, soon);
  }
}

void LockWaiter::Answer(Pending& wait) {
  // What the attempt holds goes before the answer: the caller may act on the answer at once
  // (close the file, say), and that must find the lock request over.
  wait.attempt = nullptr;
  if (wait.result.ok()) {
    wait.reply.Ok();
  } else {
    wait.reply.Error(wait.result.value());
  }
}

}  // namespace ringfuse::daemon
