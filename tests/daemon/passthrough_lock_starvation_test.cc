// Lock waits parked in the daemon must hold nothing that other requests need, on every
// transport. A write lock is held and many F_SETLKW callers wait for it, all pinned to one CPU:
// on uring-cmd the kernel puts every request of a CPU on that CPU's queue, so the waits all
// land on one queue, whose entries they keep until they are answered. Another request from
// that CPU, and the holder's own unlock from it, must still be served, and then every waiter
// must get the lock in turn.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
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
#include "transport/cpus.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::WriteFile;

constexpr int kCpu = 0;
constexpr int kWaiters = 64;
constexpr size_t kParkedAtLeast = 32;  // 4 x the entries a uring-cmd queue begins with
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
  std::atomic<int> granted{0};   // waiters that got the lock
  std::atomic<int> holding{0};   // waiters holding it now
  std::atomic<int> overlaps{0};  // times a waiter got it while another held it
};

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
int WaitForLock(const char* path, Shared* shared) {
  if (!PinToCpu()) return kNotPinned;
  const int fd = ::open(path, O_RDWR);
  if (fd < 0) return kNotOpened;
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

  void StartWaiters(size_t count) {
    for (size_t i = 0; i < count; ++i) {
      waiters_.push_back(
          std::make_unique<Child>([this] { return WaitForLock(locked_.c_str(), shared_); }));
    }
  }

  Shared* shared_ = nullptr;
  int control_[2] = {-1, -1};
  std::string locked_;
  std::unique_ptr<Child> holder_;
  std::vector<std::unique_ptr<Child>> waiters_;
};

TEST_P(LockStarvation, ParkedWaitsStopNeitherOtherRequestsNorTheUnlock) {
  ASSERT_NO_FATAL_FAILURE(StartHolder());
  StartWaiters(kWaiters);
  // Waits that came in a burst larger than a uring-cmd queue's reserve may wait in the kernel
  // for an entry (uring_cmd_transport.h), and reach the daemon only with later commits: all
  // need not be here, but far more than a queue's first entries must be.
  AwaitLockWaits(kWaiters, kBound);
  EXPECT_GE(fs_->pending_lock_waits(), kParkedAtLeast)
      << "of " << kWaiters << " waits, so few reached the daemon";
  EXPECT_EQ(StatFromCpu("other"), 0) << "a stat from the waiters' CPU (-1: it did not return)";
  EXPECT_EQ(shared_->granted.load(), 0) << "a waiter got the lock while it was held";

  ASSERT_TRUE(Unlock()) << "the holder's unlock did not return";
  EXPECT_EQ(holder_->Join(kBound), 0);
  const auto deadline = std::chrono::steady_clock::now() + kAllWaitersBound;
  for (std::unique_ptr<Child>& waiter : waiters_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    EXPECT_EQ(waiter->Join(std::max(left, std::chrono::milliseconds(0))), 0);
  }
  EXPECT_EQ(shared_->granted.load(), kWaiters);
  EXPECT_EQ(shared_->overlaps.load(), 0) << "two waiters held the write lock at once";
  EXPECT_TRUE(AwaitLockWaits(0, kBound));
}

// One more waiter than the daemon lets one user have: exactly one of them, the last, fails at
// once with ENOLCK, and the others go on waiting. The waiters start one at a time, each once the
// one before is parked: a burst larger than a uring-cmd queue's reserve can leave waits in the
// kernel until some answer on that queue (uring_cmd_transport.h), a limit this test is not about.
TEST_P(LockStarvation, AWaitBeyondTheCapOfAUserFailsWithEnolck) {
  ASSERT_NO_FATAL_FAILURE(StartHolder());
  for (size_t parked = 0; parked < LockWaiter::kMaxWaitsPerUser; ++parked) {
    StartWaiters(1);
    ASSERT_TRUE(AwaitLockWaits(parked + 1, kBound)) << parked << " waits parked, not one more";
  }
  StartWaiters(1);
  // A stat of a missing name, never cached, from kCpu now and then: each answer on the queue
  // also brings in a wait that found no free entry and waits in the kernel (uring_cmd_transport.h).
  std::atomic<bool> refused{false};
  std::thread poker([this, &refused] {
    if (!PinCurrentThread(kCpu).ok()) return;
    const std::string missing = Mounted("missing");
    const auto deadline = std::chrono::steady_clock::now() + kAllWaitersBound;
    while (!refused && std::chrono::steady_clock::now() < deadline) {
      struct stat st {};
      ::stat(missing.c_str(), &st);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  std::optional<int> status;
  const auto deadline = std::chrono::steady_clock::now() + kAllWaitersBound;
  while (!status && std::chrono::steady_clock::now() < deadline) {
    for (const std::unique_ptr<Child>& waiter : waiters_) {
      if ((status = waiter->Wait(std::chrono::milliseconds(0)))) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  refused = true;
  poker.join();
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
