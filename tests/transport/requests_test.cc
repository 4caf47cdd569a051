// Requests that travel differently from the rest, over every transport: INTERRUPT, FORGET and
// BATCH_FORGET (which come over /dev/fuse even when the rings carry everything else); the choice
// of transport and its refusal; the uring transport's io-wq path under load; and proof that the
// uring-cmd transport really serves from its CPU-pinned rings.
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "examples/memfs/memfs.h"
#include "gtest/gtest.h"
#include "ringfuse/session.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::testing {
namespace {

using examples::MemFs;
using std::chrono::milliseconds;

constexpr milliseconds kWaitBound{5000};  // how long a test waits before it gives up
constexpr absl::Duration kHookBound = absl::Seconds(5);
constexpr const char* kEnableUring = "/sys/module/fuse/parameters/enable_uring";

// Sets enable_uring to N, and puts back the old value when destroyed, whatever the test did.
// (UringEnabled in kernel_fixture.h is the other direction.)
class UringDisabled {
 public:
  UringDisabled() {
    std::ifstream(kEnableUring) >> old_value_;
    if (old_value_.empty()) {
      reason_ = std::string(kEnableUring) + " is missing: this kernel has no FUSE-over-io_uring";
    } else if (!Write("N")) {
      reason_ = std::string("cannot write N to ") + kEnableUring;
    }
  }
  ~UringDisabled() {
    if (!old_value_.empty()) Write(old_value_);
  }
  bool ok() const { return reason_.empty(); }
  const std::string& reason() const { return reason_; }

 private:
  static bool Write(const std::string& value) {
    std::ofstream file(kEnableUring);
    file << value;
    file.flush();
    return static_cast<bool>(file);
  }

  std::string old_value_;
  std::string reason_;
};

// Clients on threads of their own, joined within a bound: past it `unblock` runs (it must make
// them return, e.g. by aborting the connection) and they are joined anyway.
class Clients {
 public:
  Clients(int count, const std::function<void(int)>& body) {
    for (int i = 0; i < count; ++i) {
      threads_.emplace_back([this, i, body] {
        body(i);
        std::lock_guard lock(mu_);
        ++finished_;
        cv_.notify_all();
      });
    }
  }
  ~Clients() {
    for (std::thread& thread : threads_) thread.join();
  }

  // True if every client finished within `bound`.
  bool JoinWithin(milliseconds bound, const std::function<void()>& unblock) {
    bool in_time;
    {
      std::unique_lock lock(mu_);
      in_time = cv_.wait_for(lock, bound, [this] { return finished_ == threads_.size(); });
    }
    if (!in_time) unblock();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    return in_time;
  }

  pthread_t native_handle(int i) { return threads_[i].native_handle(); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  size_t finished_ = 0;
  std::vector<std::thread> threads_;
};

// A handler for `signal` that does nothing, installed without SA_RESTART so that a blocking call
// interrupted by it is not restarted behind the test's back; the old one is put back after.
class NoopSignalHandler {
 public:
  explicit NoopSignalHandler(int signal) : signal_(signal) {
    struct sigaction action {};
    action.sa_handler = [](int) {};
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    sigaction(signal_, &action, &old_);
  }
  ~NoopSignalHandler() { sigaction(signal_, &old_, nullptr); }

 private:
  int signal_;
  struct sigaction old_ {};
};

int CpusIn(const cpu_set_t& set) { return CPU_COUNT(&set); }

cpu_set_t AffinityOfThisThread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof(set), &set);
  return set;
}

// io_uring's io-wq worker threads in this process (named iou-wrk-<pid of their ring's owner>).
int IoWqWorkers() {
  int count = 0;
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr) return 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::string name;
    std::ifstream(std::string("/proc/self/task/") + entry->d_name + "/comm") >> name;
    if (name.starts_with("iou-wrk")) ++count;
  }
  ::closedir(dir);
  return count;
}

// Drops every unused dentry and inode in the machine, which sends FORGETs for the dropped ones.
bool DropDentriesAndInodes() {
  ::sync();
  std::ofstream file("/proc/sys/vm/drop_caches");
  file << "2";
  file.flush();
  return static_cast<bool>(file);
}

// Waits until `done` holds, at most `bound`, calling `nudge` every so often.
bool Eventually(
    milliseconds bound, const std::function<bool()>& done,
    const std::function<void()>& nudge = [] {}) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  for (int round = 0; !done(); ++round) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    if (round % 50 == 49) nudge();
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

// ---- Over every transport ----

class Requests : public TransportTest {
 protected:
  // Attributes expire at once, so that every stat() sends a GETATTR.
  Requests() : fs_(MemFs::Options{.entry = {1, 0}, .attr = {0, 0}}) {}

  void SetUp() override {
    TransportTest::SetUp();
    if (IsSkipped()) return;
    SessionOptions options;
    // Two workers even on one CPU: one holds the request while the other reads the INTERRUPT.
    options.transport_options.workers = 2;
    absl::StatusOr<std::unique_ptr<ServedMount>> mount =
        ServedMount::Start(fs_, GetParam(), options);
    ASSERT_TRUE(mount.ok()) << mount.status();
    mount_ = std::move(*mount);
  }

  void TearDown() override { fs_.SetBeforeOp(nullptr); }

  void Abort() { (void)AbortConnection(mount_->session().connection_id()); }

  MemFs fs_;
  std::unique_ptr<ServedMount> mount_;
};

// A signal to a client blocked in a request makes the kernel send INTERRUPT for it; MemFs then
// answers the held request with EINTR. GETATTR is the call: the kernel sends INTERRUPT only for
// requests it waits for interruptibly, as stat() with expired attributes waits for its GETATTR.
// A buffered read() would not do: its READ runs in the background (readahead) while the client
// waits on the page, and a signal then sends no INTERRUPT (checked: the read completed once the
// hook let go); a direct-I/O READ would.
TEST_P(Requests, InterruptReachesTheHandlerOfTheHeldRequest) {
  fs_.AddFile(wire::kRootId, "file", "contents");
  struct stat st;
  ASSERT_EQ(::stat(mount_->Path("file").c_str(), &st), 0);  // the LOOKUP, not held

  absl::Notification held;
  absl::Notification interrupt_seen;
  std::atomic<bool> armed{true};
  fs_.SetBeforeOp([&](Opcode opcode) {
    if (opcode == Opcode::kInterrupt) interrupt_seen.Notify();
    if (opcode != Opcode::kGetattr || !armed.exchange(false)) return;
    held.Notify();
    // The transport raised the interrupted flag before MemFs counted the INTERRUPT.
    interrupt_seen.WaitForNotificationWithTimeout(kHookBound);
  });

  NoopSignalHandler handler(SIGUSR1);
  int result = 0;
  int error = 0;
  Clients client(1, [&](int) {
    struct stat client_st;
    result = ::stat(mount_->Path("file").c_str(), &client_st);
    error = errno;
  });
  const bool was_held = held.WaitForNotificationWithTimeout(kHookBound);
  if (was_held) pthread_kill(client.native_handle(0), SIGUSR1);
  const bool returned = client.JoinWithin(kWaitBound, [this] { Abort(); });

  ASSERT_TRUE(was_held) << "the GETATTR never reached the handler";
  ASSERT_TRUE(returned) << "the interrupted stat() did not return";
  EXPECT_TRUE(interrupt_seen.HasBeenNotified());
  EXPECT_GE(fs_.RequestCount(Opcode::kInterrupt), 1u);
  EXPECT_EQ(result, -1);
  EXPECT_EQ(error, EINTR) << std::strerror(error);
}

TEST_P(Requests, ForgetAndBatchForgetReturnEveryLookupReference) {
  constexpr int kFiles = 300;
  std::vector<uint64_t> nodes;
  for (int i = 0; i < kFiles; ++i) {
    nodes.push_back(fs_.AddFile(wire::kRootId, "f" + std::to_string(i), ""));
  }
  for (int i = 0; i < kFiles; ++i) {
    struct stat st;
    ASSERT_EQ(::stat(mount_->Path("f" + std::to_string(i)).c_str(), &st), 0);
  }
  for (uint64_t node : nodes) ASSERT_GE(fs_.KernelRefs(node), 1u);

  auto all_forgotten = [&] {
    for (uint64_t node : nodes) {
      if (fs_.KernelRefs(node) != 0) return false;
    }
    return true;
  };
  ASSERT_TRUE(DropDentriesAndInodes());
  // Another drop now and then: a dentry still busy on the first pass is freed by a later one.
  EXPECT_TRUE(Eventually(kWaitBound, all_forgotten, [] { DropDentriesAndInodes(); }));
  EXPECT_GT(fs_.RequestCount(Opcode::kForget) + fs_.RequestCount(Opcode::kBatchForget), 0u);
  std::printf("[ measured ] over %s: %lu FORGET, %lu BATCH_FORGET\n",
              std::string(TransportName(GetParam())).c_str(), fs_.RequestCount(Opcode::kForget),
              fs_.RequestCount(Opcode::kBatchForget));
}

INSTANTIATE_TEST_SUITE_P(Transports, Requests, kEveryTransport, TransportTestName);

// ---- Which transport a session picks ----

class RequestsTransportChoice : public ::testing::Test {
 protected:
  void SetUp() override { RINGFUSE_SKIP_UNLESS_KERNEL(); }

  static bool IsMounted(const std::string& mountpoint) {
    std::ifstream mounts("/proc/self/mounts");
    std::string device, path, rest;
    while (mounts >> device >> path && std::getline(mounts, rest)) {
      if (path == mountpoint) return true;
    }
    return false;
  }

  // Starts a session with TransportKind::kAuto; it must pick `expected` and serve.
  void ExpectAutoPicks(TransportKind expected) {
    absl::StatusOr<std::unique_ptr<ServedMount>> mount =
        ServedMount::Start(fs_, TransportKind::kAuto);
    ASSERT_TRUE(mount.ok()) << mount.status();
    EXPECT_EQ((*mount)->session().transport_kind(), expected);
    // The choice is explained: which transport, and why.
    EXPECT_NE((*mount)->session().transport_choice().find(
                  "over the " + std::string(TransportName(expected)) + " transport ("),
              std::string::npos)
        << (*mount)->session().transport_choice();
    EXPECT_NE((*mount)->session().transport_choice().find("FUSE-over-io_uring"), std::string::npos)
        << (*mount)->session().transport_choice();
    struct stat st;
    EXPECT_EQ(::stat((*mount)->root().c_str(), &st), 0);
  }

  MemFs fs_;
};

TEST_F(RequestsTransportChoice, AutoPicksUringWhenTheKernelOffersNoRings) {
  UringDisabled off;
  if (!off.ok()) GTEST_SKIP() << off.reason();
  ExpectAutoPicks(TransportKind::kUring);
}

// Asked for explicitly, uring-cmd fails loudly and says how to turn it on, rather than falling
// back to another transport; and it leaves no mount behind.
TEST_F(RequestsTransportChoice, UringCmdFailsAtStartWhenTheKernelOffersNoRings) {
  UringDisabled off;
  if (!off.ok()) GTEST_SKIP() << off.reason();
  char dir_template[] = "/tmp/ringfuse-choice.XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string mountpoint = dir_template;
  SessionOptions options;
  options.mount.mountpoint = mountpoint;
  options.transport = TransportKind::kUringCmd;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Start(options, fs_);
  const bool mounted_after = IsMounted(mountpoint);
  if (mounted_after) ::umount2(mountpoint.c_str(), MNT_DETACH);
  ::rmdir(mountpoint.c_str());
  ASSERT_FALSE(session.ok()) << "started over " << TransportName((*session)->transport_kind());
  EXPECT_NE(session.status().message().find("enable_uring"), std::string::npos) << session.status();
  EXPECT_FALSE(mounted_after);
}

TEST_F(RequestsTransportChoice, AutoPicksUringCmdWhenTheKernelOffersRings) {
  UringEnabled on;
  if (!on.ok()) GTEST_SKIP() << on.reason();
  ExpectAutoPicks(TransportKind::kUringCmd);
}

// ---- The transports' own paths ----

// More than one read in flight per ring sends each read through io-wq (see uring_transport.cc):
// a path that once deadlocked. Zero timeouts make every stat() two requests.
TEST(RequestsOverUring, QueueDepthFourServesManyClientsWithoutAHang) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  MemFs fs(MemFs::Options{.entry = {0, 0}, .attr = {0, 0}});
  fs.AddFile(wire::kRootId, "shared", "data");
  SessionOptions options;
  options.transport_options.queue_depth = 4;
  absl::StatusOr<std::unique_ptr<ServedMount>> mount =
      ServedMount::Start(fs, TransportKind::kUring, options);
  ASSERT_TRUE(mount.ok()) << mount.status();
  const std::string path = (*mount)->Path("shared");
  std::atomic<int> failures{0};
  Clients clients(8, [&](int) {
    for (int i = 0; i < 500; ++i) {
      struct stat st;
      if (::stat(path.c_str(), &st) != 0) ++failures;
    }
  });
  const bool finished = clients.JoinWithin(
      milliseconds(60000), [&] { (void)AbortConnection((*mount)->session().connection_id()); });
  ASSERT_TRUE(finished) << "clients hung";
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GE(fs.RequestCount(Opcode::kLookup), 8u * 500u);
  // Idle io-wq workers linger for seconds, so the ones that served the reads are still here.
  EXPECT_GT(IoWqWorkers(), 0) << "the reads did not go through io-wq";
}

// The kernel queues a ring request on its caller's CPU, and that queue's thread is pinned there:
// a request handled on a thread allowed on one CPU only came over a ring. FORGETs never travel
// over the rings: the /dev/fuse reader that handles them keeps the process's whole CPU set.
TEST(RequestsOverUringCmd, RingRequestsAreHandledOnPinnedThreads) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  UringEnabled on;
  if (!on.ok()) GTEST_SKIP() << on.reason();
  const int process_cpus = CpusIn(AffinityOfThisThread());
  MemFs fs(MemFs::Options{.entry = {0, 0}, .attr = {0, 0}});
  for (int i = 0; i < 20; ++i) fs.AddFile(wire::kRootId, "f" + std::to_string(i), "");
  absl::StatusOr<std::unique_ptr<ServedMount>> mount =
      ServedMount::Start(fs, TransportKind::kUringCmd);
  ASSERT_TRUE(mount.ok()) << mount.status();

  std::mutex mu;
  std::vector<int> ring_cpus;    // CPUs allowed to the threads that handled LOOKUP and GETATTR
  std::vector<int> forget_cpus;  // ... and FORGET or BATCH_FORGET
  fs.SetBeforeOp([&](Opcode opcode) {
    const int cpus = CpusIn(AffinityOfThisThread());
    std::lock_guard lock(mu);
    if (opcode == Opcode::kLookup || opcode == Opcode::kGetattr) ring_cpus.push_back(cpus);
    if (opcode == Opcode::kForget || opcode == Opcode::kBatchForget) forget_cpus.push_back(cpus);
  });
  for (int i = 0; i < 20; ++i) {
    struct stat st;
    ASSERT_EQ(::stat((*mount)->Path("f" + std::to_string(i)).c_str(), &st), 0);
  }
  ASSERT_TRUE(DropDentriesAndInodes());
  const bool forgotten = Eventually(
      kWaitBound,
      [&] {
        std::lock_guard lock(mu);
        return !forget_cpus.empty();
      },
      [] { DropDentriesAndInodes(); });
  fs.SetBeforeOp(nullptr);

  ASSERT_FALSE(ring_cpus.empty());
  for (int cpus : ring_cpus) EXPECT_EQ(cpus, 1) << "a request was handled off the rings";
  ASSERT_TRUE(forgotten) << "no FORGET arrived";
  for (int cpus : forget_cpus) EXPECT_EQ(cpus, process_cpus);
  if (process_cpus == 1) GTEST_SKIP() << "one CPU: pinned and unpinned threads look alike";
}

}  // namespace
}  // namespace ringfuse::testing
