// LockWaiter: waits answered when their attempt is done, and INTERRUPT wherever it falls.
#include "daemon/locks/lock_waiter.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "ringfuse/protocol/reply_channel.h"
#include "tests/daemon/user_namespace.h"

namespace ringfuse::daemon {
namespace {

// Keeps the error of each reply sent through it.
class AnswerChannel : public ReplyChannel {
 public:
  void SendReply(const ReplyTarget&, int32_t error, std::span<const ConstBytes>) override {
    absl::MutexLock lock(&mutex_);
    errors_.push_back(error);
  }
  size_t answers() {
    absl::MutexLock lock(&mutex_);
    return errors_.size();
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
    interrupted_ = interrupted;
    WaitAs(7, 0, [] { return LockWaiter::kNotYet; });
  }

  // A wait for request `unique` by caller `uid`, in process `pid` (this thread: the daemon's
  // own user namespace, where the uid is the account).
  void WaitAs(uint64_t unique, uint32_t uid, LockWaiter::Attempt attempt, pid_t pid = ::gettid()) {
    header_.unique = unique;
    header_.uid = uid;
    header_.pid = static_cast<uint32_t>(pid);
    const RequestContext context{header_, extensions_, &interrupted_};
    waiter_.Wait(context, std::move(attempt), EmptyReply(channel_.Promise({unique, 0})));
  }

  bool AwaitPending(size_t count) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (waiter_.pending() != count) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  wire::InHeader header_{};
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
      context, [&tries] { return ++tries < 3 ? LockWaiter::kNotYet : base::Errno(); },
      EmptyReply(channel_.Promise({3, 0})));
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

// The caps: beyond kMaxWaitsPerUser waits of one uid, or kMaxWaits in all, ENOLCK at once.
TEST_F(LockWaiterTest, WaitsBeyondTheCapsAreRefusedWithEnolck) {
  auto never = [] { return LockWaiter::kNotYet; };
  uint64_t unique = 100;
  for (size_t i = 0; i < LockWaiter::kMaxWaitsPerUser; ++i) WaitAs(unique++, 1000, never);
  EXPECT_EQ(waiter_.pending(), LockWaiter::kMaxWaitsPerUser);
  WaitAs(unique++, 1000, never);
  EXPECT_EQ(channel_.AwaitAnswer(), -ENOLCK) << "one more of the same user";
  EXPECT_EQ(waiter_.pending(), LockWaiter::kMaxWaitsPerUser);

  for (uint32_t uid = 0; waiter_.pending() < LockWaiter::kMaxWaits; ++uid) {
    WaitAs(unique++, uid, never);
  }
  EXPECT_EQ(channel_.answers(), 1u) << "other users fill the rest";
  WaitAs(unique++, 5000, never);
  EXPECT_EQ(channel_.answers(), 2u) << "a new user once all are taken: refused too";
  EXPECT_EQ(waiter_.pending(), LockWaiter::kMaxWaits);

  waiter_.Interrupt(100);  // the first wait of user 1000 ends
  ASSERT_TRUE(AwaitPending(LockWaiter::kMaxWaits - 1));
  WaitAs(unique++, 1000, never);
  EXPECT_EQ(waiter_.pending(), LockWaiter::kMaxWaits) << "the user's freed place is taken again";
}

// A user with subordinate uids (a rootless container) is one user: its uids share the cap of
// one. The control: the same uids in the daemon's own namespace are users of their own.
TEST_F(LockWaiterTest, AUsersSubordinateUidsShareItsCap) {
  const UserNamespaceProcess container(1101, 1);
  ASSERT_TRUE(container.made()) << "the user could not make a user namespace";
  auto never = [] { return LockWaiter::kNotYet; };
  uint64_t unique = 100;
  for (size_t i = 0; i < LockWaiter::kMaxWaitsPerUser; ++i) {
    WaitAs(unique++, 200000, never, container.pid());
  }
  WaitAs(unique++, 200000, never);
  EXPECT_EQ(channel_.answers(), 0u) << "the control: uid 200000 of the daemon's namespace waits";
  WaitAs(unique++, 200001, never, container.pid());
  EXPECT_EQ(channel_.AwaitAnswer(), -ENOLCK) << "another uid of the same user";
  EXPECT_EQ(waiter_.pending(), LockWaiter::kMaxWaitsPerUser + 1);
}

// A lock that stays busy is retried ever less often: not every 2 ms (250 times in the half
// second), but about 13 times. A slow machine only tries less.
TEST_F(LockWaiterTest, RetriesBackOff) {
  std::atomic<int> tries{0};
  WaitAs(3, 0, [&tries] {
    ++tries;
    return LockWaiter::kNotYet;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_GE(tries.load(), 1);
  EXPECT_LE(tries.load(), 40);
}

// Attempts run without the lock waiter's mutex: a slow one keeps neither a new wait nor an
// INTERRUPT waiting.
TEST_F(LockWaiterTest, ASlowAttemptBlocksNeitherWaitNorInterrupt) {
  absl::Notification attempting;
  absl::Notification release;
  WaitAs(3, 0, [&] {
    attempting.Notify();
    release.WaitForNotification();
    return base::Errno();
  });
  ASSERT_TRUE(attempting.WaitForNotificationWithTimeout(absl::Seconds(5)));
  absl::Notification returned;
  std::thread handler([&] {
    WaitForever(false);
    waiter_.Interrupt(7);
    returned.Notify();
  });
  EXPECT_TRUE(returned.WaitForNotificationWithTimeout(absl::Seconds(5)));
  release.Notify();
  handler.join();
  EXPECT_TRUE(AwaitPending(0));
}

}  // namespace
}  // namespace ringfuse::daemon
