// LockWaiter: waits answered when their attempt is done, and INTERRUPT wherever it falls.
#include "daemon/lock_waiter.h"

#include <atomic>
#include <cerrno>
#include <chrono>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ringfuse::daemon {
namespace {

// Keeps the error of each reply sent through it.
class AnswerChannel : public ReplyChannel {
 public:
  void SendReply(const ReplyTarget&, int32_t error, std::span<const ConstBytes>) override {
    absl::MutexLock lock(&mutex_);
    errors_.push_back(error);
  }
  // The error of the first reply, once one came within a bound.
  std::optional<int32_t> AwaitAnswer() {
    absl::MutexLock lock(&mutex_);
    auto answered = [this] {
      mutex_.AssertHeld();
      return !errors_.empty();
    };
    if (!mutex_.AwaitWithTimeout(absl::Condition(&answered), absl::Seconds(5))) return {};
    return errors_.front();
  }

 private:
  absl::Mutex mutex_;
  std::vector<int32_t> errors_ ABSL_GUARDED_BY(mutex_);
};

class LockWaiterTest : public ::testing::Test {
 protected:
  // A wait for request 7, marked interrupted or not, on a lock that never comes free.
  void WaitForever(bool interrupted) {
    header_.unique = 7;
    interrupted_ = interrupted;
    const RequestContext context{header_, extensions_, &interrupted_};
    waiter_.Wait(
        context, [] { return EAGAIN; }, EmptyReply(ReplyToken(&channel_, {7, 0})));
  }

  abi::InHeader header_{};
  Extensions extensions_;
  std::atomic<bool> interrupted_{false};
  AnswerChannel channel_;
  LockWaiter waiter_;
};

TEST_F(LockWaiterTest, AGrantedWaitIsAnswered) {
  std::atomic<int> tries{0};
  header_.unique = 3;
  const RequestContext context{header_, extensions_};
  waiter_.Wait(
      context, [&tries] { return ++tries < 3 ? EAGAIN : 0; },
      EmptyReply(ReplyToken(&channel_, {3, 0})));
  EXPECT_EQ(channel_.AwaitAnswer(), 0);
  EXPECT_EQ(waiter_.pending(), 0u);
}

TEST_F(LockWaiterTest, AnInterruptAfterTheWaitBeganEndsIt) {
  WaitForever(false);
  EXPECT_EQ(waiter_.pending(), 1u);
  waiter_.Interrupt(7);
  EXPECT_EQ(channel_.AwaitAnswer(), -EINTR);
}

// The dispatcher marks the request and calls Interrupt before the handler got to Wait: the
// Interrupt finds nothing, and the mark alone must end the wait.
TEST_F(LockWaiterTest, AnInterruptBeforeTheWaitBeganEndsIt) {
  waiter_.Interrupt(7);
  WaitForever(true);
  EXPECT_EQ(channel_.AwaitAnswer(), -EINTR);
}

}  // namespace
}  // namespace ringfuse::daemon
