// Lock waits parked in the daemon must hold nothing that other requests need, on every
// transport. A write lock is held and many F_SETLKW callers wait for it, all pinned to one CPU:
// on uring-cmd the kernel puts every request of a CPU on that CPU's queue, so the waits all
// land on one queue, whose entries they keep until they are answered. Another request from
// that CPU, and the holder's own unlock from it, must still be served, and then every waiter
// must get the lock in turn.
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/daemon/child_process.h"
#include "tests/daemon/passthrough_fixture.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::WriteFile;

constexpr int kCpu = 0;
constexpr int kWaiters = 64;
// Generous: each step takes milliseconds when nothing is starved.
constexpr std::chrono::seconds kBound{5};
constexpr std::chrono::seconds kAllWaitersBound{30};

// Pins the calling process to kCpu, so that the kernel queues its requests there.
bool PinToCpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(kCpu, &set);
  return ::sched_setaffinity(0, sizeof(set), &set) == 0;
}

// F_SETLK or F_SETLKW (`command`) of `type` on the whole file: 0 or the errno.
int LockWhole(int fd, int command, short type) {
  struct flock lock {};
  lock.l_type = type;
  return ::fcntl(fd, command, &lock) == 0 ? 0 : errno;
}

// What the children tell the test through memory they share with it.
struct Shared {
  std::atomic<int> granted{0};     // waiters that got the lock
  std::atomic<int> holding{0};     // waiters holding it now
  std::atomic<int> overlaps{0};    // times a waiter got it while another held it
  std::atomic<int> at_start{0};    // waiters with the file open, waiting for the start
  std::atomic<uint32_t> start{0};  // a futex: 1 once they may all ask for the lock
};

// Until the test gives the start (futex wait: the waiters sleep, leaving the CPU to the others).
void AwaitStart(Shared* shared) {
  shared->at_start.fetch_add(1);
  while (shared->start.load() == 0) {
    ::syscall(SYS_futex, &shared->start, FUTEX_WAIT, 0, nullptr, nullptr, 0);
  }
}

void GiveStart(Shared* shared) {
  shared->start.store(1);
  ::syscall(SYS_futex, &shared->start, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Exit codes of the children, besides an errno of the lock call.
enum ChildFailure { kNotPinned = 200, kNotOpened, kNoControl };

// The holder: takes the write lock and says 'L'; at any byte from the test unlocks, says 'U'.
int HoldUntilTold(const char* path, int control) {
  if (!PinToCpu()) return kNotPinned;
  const int fd = ::open(path, O_RDWR);
  if (fd < 0) return kNotOpened;
  if (const int error = LockWhole(fd, F_SETLK, F_WRLCK); error != 0) return error;
  char byte = 'L';
  if (::write(control, &byte, 1) != 1 || ::read(control, &byte, 1) != 1) return kNoControl;
  if (const int error = LockWhole(fd, F_SETLK, F_UNLCK); error != 0) return error;
  byte = 'U';
  return ::write(control, &byte, 1) == 1 ? 0 : kNoControl;
}

// A waiter: waits for the write lock, holds it a moment, and releases it.
// With `at_once`, it asks for the lock only at the test's start, with the others.
int WaitForLock(const char* path, Shared* shared, bool at_once) {
  if (!PinToCpu()) return kNotPinned;
  const int fd = ::open(path, O_RDWR);
  if (fd < 0) return kNotOpened;
  if (at_once) AwaitStart(shared);
  if (const int error = LockWhole(fd, F_SETLKW, F_WRLCK); error != 0) return error;
  shared->granted.fetch_add(1);
  if (shared->holding.fetch_add(1) != 0) shared->overlaps.fetch_add(1);
  ::sched_yield();
  shared->holding.fetch_sub(1);
  return LockWhole(fd, F_SETLK, F_UNLCK);
}

// Whether `expected` arrives on `fd` within kBound.
bool AwaitByte(int fd, char expected) {
  pollfd ready{fd, POLLIN, 0};
  char byte = 0;
  return ::poll(&ready, 1, std::chrono::milliseconds(kBound).count()) == 1 &&
         ::read(fd, &byte, 1) == 1 && byte == expected;
}

class LockStarvation : public PassthroughMountTest {
 protected:
  void SetUp() override {
    PassthroughMountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    void* shared =
        ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(shared, MAP_FAILED) << std::strerror(errno);
    shared_ = new (shared) Shared;
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, control_), 0);
    Mount();
  }
  void TearDown() override {
    // All go at once: reaped one by one, a waiter killed first may wait in its exit (the FLUSH
    // of its close) for an answer that only the death of a later one would let through.
    for (const std::unique_ptr<Child>& waiter : waiters_) {
      if (waiter->pid() > 0) ::kill(waiter->pid(), SIGKILL);
    }
    waiters_.clear();
    statters_.clear();
    holder_.reset();
    PassthroughMountTest::TearDown();
    if (shared_ != nullptr) ::munmap(shared_, sizeof(Shared));
    for (int fd : control_) {
      if (fd >= 0) ::close(fd);
    }
  }

  // 0 when a stat of a name the kernel has not cached (so a LOOKUP reaches the daemon) returns
  // within kBound from kCpu; else the errno, or -1 if it did not return.
  int StatFromCpu(const std::string& name) {
    WriteFile(Source(name), "");
    const std::string path = Mounted(name);
    return RunInChild(
        [&path] {
          if (!PinToCpu()) return static_cast<int>(kNotPinned);
          struct stat st {};
          return ::stat(path.c_str(), &st) == 0 ? 0 : errno;
        },
        -1, kBound);
  }

  // The holder of a write lock on `locked_`, pinned to kCpu, once it holds the lock.
  void StartHolder() {
    WriteFile(Mounted("locked"), "x");
    locked_ = Mounted("locked");
    const int control = control_[1];
    holder_ = std::make_unique<Child>(
        [this, control] { return HoldUntilTold(locked_.c_str(), control); }, control);
    ASSERT_TRUE(AwaitByte(control_[0], 'L')) << "the holder never took its lock";
  }
  // Has the holder unlock; whether its unlock returned within kBound.
  bool Unlock() { return ::write(control_[0], "u", 1) == 1 && AwaitByte(control_[0], 'U'); }

  void StartWaiters(size_t count, bool at_once = false) {
    for (size_t i = 0; i < count; ++i) {
      waiters_.push_back(std::make_unique<Child>(
          [this, at_once] { return WaitForLock(locked_.c_str(), shared_, at_once); }));
    }
  }

  // `count` children that stat names never cached (so that a LOOKUP reaches the daemon) from
  // kCpu, each at the start, with the waiters.
  void StartStattersAtStart(int count) {
    for (int i = 0; i < count; ++i) {
      const std::string missing = Mounted("missing" + std::to_string(i));
      statters_.push_back(std::make_unique<Child>([this, missing] {
        if (!PinToCpu()) return static_cast<int>(kNotPinned);
        AwaitStart(shared_);
        struct stat st {};
        return ::stat(missing.c_str(), &st) == 0 ? 0 : errno;
      }));
    }
  }

  // Once `count` children wait at the start, lets them all go at once.
  void GiveStartWhenReady(size_t count) {
    const auto deadline = std::chrono::steady_clock::now() + kBound;
    while (shared_->at_start.load() != static_cast<int>(count)) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "children not at the start";
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    GiveStart(shared_);
  }

  // A burst: `waiters` lock requests and `statters` stats, all from kCpu at once. Every stat must
  // return at once (ENOENT): no burst of waits may hold up other requests of their CPU.
  void Burst(size_t waiters, int statters) {
    StartWaiters(waiters, true);
    StartStattersAtStart(statters);
    ASSERT_NO_FATAL_FAILURE(GiveStartWhenReady(waiters + statters));
    const auto deadline = std::chrono::steady_clock::now() + kBound;
    for (std::unique_ptr<Child>& statter : statters_) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      EXPECT_EQ(statter->Join(std::max(left, std::chrono::milliseconds(0))), ENOENT)
          << "a stat in the burst (-1: it did not return)";
    }
  }

  // Each waiter's exit code, all within kAllWaitersBound from now (-1: it did not exit).
  std::vector<int> JoinWaiters() {
    const auto deadline = std::chrono::steady_clock::now() + kAllWaitersBound;
    std::vector<int> codes;
    for (std::unique_ptr<Child>& waiter : waiters_) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      codes.push_back(waiter->Join(std::max(left, std::chrono::milliseconds(0))));
    }
    return codes;
  }

  // Once the waiters are there: a stat from their CPU returns, so does the holder's unlock, and
  // then every waiter ends, with the lock or, when it was beyond the daemon's caps, ENOLCK, at
  // least `refused_at_least` of them so. One at a time holds the lock.
  void ExpectStatUnlockAndEveryWaiterServed(size_t refused_at_least) {
    EXPECT_EQ(StatFromCpu("other"), 0) << "a stat from the waiters' CPU (-1: it did not return)";
    EXPECT_EQ(shared_->granted.load(), 0) << "a waiter got the lock while it was held";
    ASSERT_TRUE(Unlock()) << "the holder's unlock did not return";
    EXPECT_EQ(holder_->Join(kBound), 0);
    const std::vector<int> codes = JoinWaiters();
    const auto count = [&codes](int code) { return std::count(codes.begin(), codes.end(), code); };
    EXPECT_EQ(count(0) + count(ENOLCK), static_cast<ptrdiff_t>(codes.size()))
        << count(-1) << " of " << codes.size() << " waiters did not end within the bound";
    EXPECT_GE(count(ENOLCK), static_cast<ptrdiff_t>(refused_at_least));
    EXPECT_EQ(shared_->granted.load(), count(0));
    EXPECT_EQ(shared_->overlaps.load(), 0) << "two waiters held the write lock at once";
    EXPECT_TRUE(AwaitLockWaits(0, kBound));
  }

  Shared* shared_ = nullptr;
  int control_[2] = {-1, -1};
  std::string locked_;
  std::unique_ptr<Child> holder_;
  std::vector<std::unique_ptr<Child>> waiters_;
  std::vector<std::unique_ptr<Child>> statters_;
};

TEST_P(LockStarvation, ParkedWaitsStopNeitherOtherRequestsNorTheUnlock) {
  ASSERT_NO_FATAL_FAILURE(StartHolder());
  StartWaiters(kWaiters);
  // Even those that found no free entry on a uring-cmd queue and waited in the kernel for a
  // commit there (uring_cmd_transport.h).
  EXPECT_TRUE(AwaitLockWaits(kWaiters, kBound))
      << fs_->counts().pending_lock_waits << " waits parked";
  EXPECT_EQ(StatFromCpu("other"), 0) << "a stat from the waiters' CPU (-1: it did not return)";
  EXPECT_EQ(shared_->granted.load(), 0) << "a waiter got the lock while it was held";

  ASSERT_TRUE(Unlock()) << "the holder's unlock did not return";
  EXPECT_EQ(holder_->Join(kBound), 0);
  for (int code : JoinWaiters()) EXPECT_EQ(code, 0);
  EXPECT_EQ(shared_->granted.load(), kWaiters);
  EXPECT_EQ(shared_->overlaps.load(), 0) << "two waiters held the write lock at once";
  EXPECT_TRUE(AwaitLockWaits(0, kBound));
}

// All at once, one more waiter than one user may park, and a few stats: on uring-cmd far more
// requests than a queue has free entries, so that some wait in the kernel for a commit on that
// queue, behind waits that will park (uring_cmd_transport.h). The stats, a later stat and the
// unlock must still be answered, and every waiter end with the lock or ENOLCK.
TEST_P(LockStarvation, ABurstBeyondTheCapOfAUserStopsNeitherOtherRequestsNorTheUnlock) {
  ASSERT_NO_FATAL_FAILURE(StartHolder());
  ASSERT_NO_FATAL_FAILURE(Burst(LockWaiter::kMaxWaitsPerUser + 1, 8));
  EXPECT_TRUE(AwaitLockWaits(LockWaiter::kMaxWaitsPerUser, kBound))
      << fs_->counts().pending_lock_waits << " waits parked";
  ExpectStatUnlockAndEveryWaiterServed(1);
}

// Half as many waiters as one user may park, each with a stat beside it, all at once: every
// waiter parks, every stat returns, and once unlocked every waiter gets the lock.
TEST_P(LockStarvation, ABurstOfWaitsAndOtherRequestsStopsNeitherTheOthersNorTheUnlock) {
  ASSERT_NO_FATAL_FAILURE(StartHolder());
  ASSERT_NO_FATAL_FAILURE(Burst(kWaiters, kWaiters));
  EXPECT_TRUE(AwaitLockWaits(kWaiters, kBound))
      << fs_->counts().pending_lock_waits << " waits parked";
  ExpectStatUnlockAndEveryWaiterServed(0);
  EXPECT_EQ(shared_->granted.load(), kWaiters);
}

// One more waiter than the daemon lets one user have: exactly one of them, whichever came last,
// fails at once with ENOLCK, and the others go on waiting, with no other request to bring in
// those that waited in the kernel for a uring-cmd entry (uring_cmd_transport.h).
TEST_P(LockStarvation, AWaitBeyondTheCapOfAUserFailsWithEnolck) {
  ASSERT_NO_FATAL_FAILURE(StartHolder());
  StartWaiters(LockWaiter::kMaxWaitsPerUser + 1);
  std::optional<int> status;
  const auto deadline = std::chrono::steady_clock::now() + kAllWaitersBound;
  while (!status && std::chrono::steady_clock::now() < deadline) {
    for (const std::unique_ptr<Child>& waiter : waiters_) {
      if ((status = waiter->Wait(std::chrono::milliseconds(0)))) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(status.has_value()) << "no waiter was refused";
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), ENOLCK) << std::strerror(WEXITSTATUS(*status));
  EXPECT_TRUE(AwaitLockWaits(LockWaiter::kMaxWaitsPerUser, kBound));
  EXPECT_EQ(shared_->granted.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Transports, LockStarvation, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
