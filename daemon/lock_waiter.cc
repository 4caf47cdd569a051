#include "daemon/lock_waiter.h"

#include <cerrno>

#include "absl/time/time.h"

namespace ringfuse::daemon {
namespace {

constexpr absl::Duration kRetryInterval = absl::Milliseconds(2);

}  // namespace

LockWaiter::LockWaiter() : thread_(&LockWaiter::Run, this) {}

LockWaiter::~LockWaiter() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  thread_.join();
}

// The dispatcher marks a request interrupted before it calls Interrupt, which takes the mutex:
// so either the mark is seen here, under the mutex, or Interrupt comes after and finds the
// request pending. Either way the INTERRUPT is not lost.
void LockWaiter::Wait(const RequestContext& context, Attempt attempt, EmptyReply reply) {
  absl::MutexLock lock(&mutex_);
  pending_.push_back(
      Pending{context.header.unique, std::move(attempt), std::move(reply), context.Interrupted()});
}

void LockWaiter::Interrupt(uint64_t unique) {
  absl::MutexLock lock(&mutex_);
  for (Pending& pending : pending_) {
    if (pending.unique == unique) pending.interrupted = true;
  }
}

size_t LockWaiter::pending() const {
  absl::ReaderMutexLock lock(&mutex_);
  return pending_.size();
}

void LockWaiter::Run() {
  absl::MutexLock lock(&mutex_);
  while (true) {
    mutex_.Await(absl::Condition(this, &LockWaiter::HasWork));
    if (stopping_) break;
    RetryAll();
    mutex_.AwaitWithTimeout(absl::Condition(&stopping_), kRetryInterval);
  }
  for (Pending& pending : pending_) pending.reply.Error(EINTR);
  pending_.clear();
}

void LockWaiter::RetryAll() {
  std::erase_if(pending_, [](Pending& pending) {
    const int error = pending.interrupted ? EINTR : pending.attempt();
    if (error == EAGAIN) return false;
    // What the attempt holds goes before the answer: the caller may act on the answer at once
    // (close the file, say), and that must find the lock request over.
    pending.attempt = nullptr;
    if (error == 0) {
      pending.reply.Ok();
    } else {
      pending.reply.Error(error);
    }
    return true;
  });
}

}  // namespace ringfuse::daemon
