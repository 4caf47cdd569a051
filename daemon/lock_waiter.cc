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

void LockWaiter::Wait(uint64_t unique, Attempt attempt, EmptyReply reply) {
  absl::MutexLock lock(&mutex_);
  pending_.push_back(Pending{unique, std::move(attempt), std::move(reply)});
}

void LockWaiter::Interrupt(uint64_t unique) {
  absl::MutexLock lock(&mutex_);
  for (Pending& pending : pending_) {
    if (pending.unique == unique) pending.interrupted = true;
  }
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
    if (error == 0) {
      pending.reply.Ok();
    } else {
      pending.reply.Error(error);
    }
    return true;
  });
}

}  // namespace ringfuse::daemon
