// Every way a session ends, over every transport: it ends within a second, joins every thread,
// closes every fd, leaves no mount behind, and no client hangs on what is left.
//
// Each wait is bounded well past what is asserted, so that a failure reports a time instead of
// hanging; past the bound the connection is aborted through fusectl, which ends any wait.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "examples/memfs/memfs.h"
#include "gtest/gtest.h"
#include "ringfuse/session.h"
#include "ringfuse/signals.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::testing {
namespace {

using examples::MemFs;

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kEndBound{1000};   // what every way of ending must achieve
constexpr milliseconds kWaitBound{5000};  // how long a test waits before it gives up

long MillisecondsSince(Clock::time_point start) {
  return static_cast<long>(std::chrono::duration_cast<milliseconds>(Clock::now() - start).count());
}

// Shown in the test log, so that the stop times can be compared across transports.
void Report(const char* what, TransportKind transport, long ms) {
  std::printf("[ measured ] %s over %s: %ld ms\n", what,
              std::string(TransportName(transport)).c_str(), ms);
}

// Runs `call` on a thread of its own and waits for it at most `bound`. Past the bound `unblock`
// runs (it must make `call` return) and the thread is joined anyway. True if it finished in time.
bool FinishesWithin(milliseconds bound, const std::function<void()>& call,
                    const std::function<void()>& unblock) {
  std::packaged_task<void()> task(call);
  std::future<void> done = task.get_future();
  std::thread runner(std::move(task));
  const bool in_time = done.wait_for(bound) == std::future_status::ready;
  if (!in_time) unblock();
  runner.join();
  return in_time;
}

bool IsMounted(const std::string& mountpoint) {
  std::ifstream mounts("/proc/self/mounts");
  std::string device, path, rest;
  while (mounts >> device >> path && std::getline(mounts, rest)) {
    if (path == mountpoint) return true;
  }
  return false;
}

size_t EntriesIn(const char* directory) {
  DIR* dir = ::opendir(directory);
  if (dir == nullptr) return 0;
  size_t count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) ++count;
  }
  ::closedir(dir);
  return count;
}

// The threads of this process that are in uninterruptible sleep (state D).
int ThreadsInDiskSleep() {
  int count = 0;
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr) return 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream stat(absl::StrFormat("/proc/self/task/%s/stat", entry->d_name));
    std::string line;
    std::getline(stat, line);
    // The state follows the command name, which is in parentheses and may hold spaces.
    const size_t close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'D') ++count;
  }
  ::closedir(dir);
  return count;
}

// ---- A daemon in a child process ----

// What the child serves: a file to look up, and optionally every OPEN held forever.
struct DaemonSpec {
  TransportKind transport;
  bool hold_opens = false;
};

void WriteLine(int fd, const std::string& line) {
  const std::string text = line + "\n";
  (void)!::write(fd, text.data(), text.size());
}

// The child's whole life, as a real daemon lives it: signals blocked before any thread exists,
// a session, "ready <connection id>" to the parent, then serving until SIGTERM or SIGINT.
[[noreturn]] void ServeInChild(const DaemonSpec& spec, const std::string& mountpoint, int report) {
  StopSignals signals;
  MemFs fs;
  fs.AddFile(wire::kRootId, "file", "contents");
  if (spec.hold_opens) {
    fs.SetBeforeOp([report](Opcode opcode) {
      if (opcode != Opcode::kOpen) return;
      WriteLine(report, "held");
      for (;;) ::pause();  // until SIGKILL
    });
  }
  SessionOptions options;
  options.mount.mountpoint = mountpoint;
  options.transport = spec.transport;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Start(options, fs);
  if (!session.ok()) {
    WriteLine(report, "error " + session.status().ToString());
    ::_exit(1);
  }
  WriteLine(report, absl::StrFormat("ready %u", (*session)->connection_id()));
  signals.Wait(**session);
  session->reset();
  ::_exit(0);
}

// The parent's handle on a daemon child. Whatever happens to the test, the destructor leaves
// no process, no mount and no directory behind.
class Daemon {
 public:
  ~Daemon() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      (void)ExitStatusWithin(kWaitBound);
    }
    if (connection_id_ != 0 && IsMounted(mountpoint_)) {
      (void)AbortConnection(connection_id_);
      ::umount2(mountpoint_.c_str(), MNT_DETACH);
    }
    if (report_ >= 0) ::close(report_);
    if (!mountpoint_.empty()) ::rmdir(mountpoint_.c_str());
  }

  // Forks the child and waits for its "ready"; an error says what the child reported.
  absl::Status Start(const DaemonSpec& spec) {
    char dir_template[] = "/tmp/ringfuse-daemon.XXXXXX";
    if (::mkdtemp(dir_template) == nullptr) return absl::InternalError("mkdtemp failed");
    mountpoint_ = dir_template;
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
    // The child is single-threaded from here on (only the forking thread is copied): it can
    // block signals before its session starts any thread, as StopSignals requires.
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(ends[0]);
      ServeInChild(spec, mountpoint_, ends[1]);
    }
    ::close(ends[1]);
    report_ = ends[0];
    if (pid_ < 0) return absl::InternalError("fork failed");
    const std::optional<std::string> line = ReadLine(kWaitBound);
    if (!line) return absl::DeadlineExceededError("the daemon did not report ready");
    if (!line->starts_with("ready ") || !absl::SimpleAtoi(line->substr(6), &connection_id_)) {
      return absl::InternalError("the daemon reported: " + *line);
    }
    return absl::OkStatus();
  }

  // The next line the child wrote, if one comes within `bound`.
  std::optional<std::string> ReadLine(milliseconds bound) {
    std::string line;
    const auto deadline = Clock::now() + bound;
    for (;;) {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
      pollfd wait{report_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&wait, 1, static_cast<int>(left.count())) <= 0) {
        return std::nullopt;
      }
      char c;
      if (::read(report_, &c, 1) != 1) return std::nullopt;
      if (c == '\n') return line;
      line += c;
    }
  }

  // Reaps the child; its wait status, or nothing if it is still alive after `bound`.
  std::optional<int> ExitStatusWithin(milliseconds bound) {
    const auto deadline = Clock::now() + bound;
    for (;;) {
      int status = 0;
      const pid_t reaped = ::waitpid(pid_, &status, WNOHANG);
      if (reaped == pid_ || reaped < 0) {
        pid_ = -1;
        return status;
      }
      if (Clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(milliseconds(1));
    }
  }

  pid_t pid() const { return pid_; }
  uint32_t connection_id() const { return connection_id_; }
  const std::string& mountpoint() const { return mountpoint_; }
  std::string Path(const std::string& relative) const { return mountpoint_ + "/" + relative; }

 private:
  pid_t pid_ = -1;
  int report_ = -1;
  std::string mountpoint_;
  uint32_t connection_id_ = 0;
};

// ---- The tests ----

class Teardown : public TransportTest {
 protected:
  void SetUp() override {
    TransportTest::SetUp();
    if (IsSkipped()) return;
    fs_.AddFile(wire::kRootId, "file", "contents");
  }

  void StartMount() {
    absl::StatusOr<std::unique_ptr<ServedMount>> mount = ServedMount::Start(fs_, GetParam());
    ASSERT_TRUE(mount.ok()) << mount.status();
    mount_ = std::move(*mount);
    ASSERT_EQ(mount_->session().transport_kind(), GetParam());
    int result = -1;
    ASSERT_TRUE(FinishesWithin(
        kWaitBound,
        [&] {
          struct stat st;
          result = ::stat(mount_->Path("file").c_str(), &st);
        },
        [this] { Abort(); }))
        << "the fresh mount does not answer";
    ASSERT_EQ(result, 0);
  }

  // How long the session takes to end by itself from `start`; -1 past kWaitBound (it is then
  // aborted so that the test can go on).
  long EndedAfter(Clock::time_point start) {
    if (!WaitsForEnd(mount_->session(), kWaitBound)) return -1;
    return MillisecondsSince(start);
  }

  void Abort() { (void)AbortConnection(mount_->session().connection_id()); }

  MemFs fs_;
  std::unique_ptr<ServedMount> mount_;
};

TEST_P(Teardown, UmountByAnotherProcessEndsTheSession) {
  ASSERT_NO_FATAL_FAILURE(StartMount());
  const std::string root = mount_->root();
  const auto start = Clock::now();
  int result = -1;
  ASSERT_TRUE(FinishesWithin(
      kWaitBound, [&] { result = ::umount2(root.c_str(), 0); }, [&] { Abort(); }))
      << "umount2 hung";
  ASSERT_EQ(result, 0) << std::strerror(errno);
  const long ms = EndedAfter(start);
  Report("umount by another", GetParam(), ms);
  ASSERT_GE(ms, 0) << "the session did not end";
  EXPECT_LT(ms, kEndBound.count());
  EXPECT_FALSE(IsMounted(root));
}

TEST_P(Teardown, StopFromAnotherThreadEndsTheSession) {
  ASSERT_NO_FATAL_FAILURE(StartMount());
  const auto start = Clock::now();
  std::thread stopper([this] { mount_->session().Stop(); });
  const long ms = EndedAfter(start);
  stopper.join();
  Report("Stop from another thread", GetParam(), ms);
  ASSERT_GE(ms, 0) << "the session did not end";
  EXPECT_LT(ms, kEndBound.count());
  EXPECT_FALSE(IsMounted(mount_->root()));
}

// A lazy unmount leaves the connection alive while a file is open: only the abort that Stop
// adds ends it. The client's next request must then fail at once, not wait for a server that
// has stopped serving.
TEST_P(Teardown, StopEndsTheConnectionWhileAClientHoldsAFileOpen) {
  ASSERT_NO_FATAL_FAILURE(StartMount());
  const int fd = ::open(mount_->Path("file").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  const auto start = Clock::now();
  long stop_ms = -1;  // Stop returns once it has aborted the connection
  std::thread stopper([&] {
    mount_->session().Stop();
    stop_ms = MillisecondsSince(start);
  });
  const long ms = EndedAfter(start);
  stopper.join();
  Report("Stop with a file held open, Wait returned", GetParam(), ms);
  Report("Stop with a file held open, Stop returned", GetParam(), stop_ms);
  EXPECT_GE(ms, 0) << "the session did not end";
  EXPECT_LT(ms, kEndBound.count());
  EXPECT_LT(stop_ms, kEndBound.count());

  // GETXATTR is never answered from a cache: it reaches the connection, or fails.
  ssize_t result = 0;
  int error = 0;
  const bool returned = FinishesWithin(
      kWaitBound,
      [&] {
        char value[16];
        result = ::fgetxattr(fd, "user.none", value, sizeof(value));
        error = errno;
      },
      [&] { Abort(); });
  ::close(fd);  // FLUSH fails on the dead connection; nothing to check
  ASSERT_TRUE(returned) << "a client hung on a connection left alive with nobody serving it";
  EXPECT_EQ(result, -1);
  EXPECT_EQ(error, ENOTCONN) << std::strerror(error);
}

TEST_P(Teardown, AbortThroughFusectlEndsTheSession) {
  ASSERT_NO_FATAL_FAILURE(StartMount());
  const auto start = Clock::now();
  ASSERT_TRUE(AbortConnection(mount_->session().connection_id()).ok());
  const long ms = EndedAfter(start);
  Report("abort through fusectl", GetParam(), ms);
  ASSERT_GE(ms, 0) << "the session did not end";
  EXPECT_LT(ms, kEndBound.count());
  struct stat st;  // a name never looked up: the kernel has to ask, and cannot
  EXPECT_EQ(::stat(mount_->Path("never-looked-up").c_str(), &st), -1);
  EXPECT_EQ(errno, ENOTCONN) << std::strerror(errno);
}

// Threads and fds are counted once the session is destroyed: the rings' io-wq workers and an
// exiting thread's /proc entry may outlive pthread_join by a moment, so the counts get until
// kEndBound to come back.
TEST_P(Teardown, LeavesNoThreadOrFdBehind) {
  const size_t threads_before = EntriesIn("/proc/self/task");
  const size_t fds_before = EntriesIn("/proc/self/fd");
  ASSERT_NO_FATAL_FAILURE(StartMount());
  for (int i = 0; i < 50; ++i) {
    struct stat st;
    ASSERT_EQ(::stat(mount_->Path("file").c_str(), &st), 0);
  }
  EXPECT_GT(EntriesIn("/proc/self/task"), threads_before);
  EXPECT_GT(EntriesIn("/proc/self/fd"), fds_before);
  mount_.reset();
  const auto deadline = Clock::now() + kEndBound;
  while (Clock::now() < deadline && (EntriesIn("/proc/self/task") != threads_before ||
                                     EntriesIn("/proc/self/fd") != fds_before)) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_EQ(EntriesIn("/proc/self/task"), threads_before);
  EXPECT_EQ(EntriesIn("/proc/self/fd"), fds_before);
}

// A daemon forked off as a real one runs, ended by a signal.
void ExpectSignalEndsDaemon(TransportKind transport, int signal) {
  Daemon daemon;
  ASSERT_TRUE(daemon.Start({transport}).ok());
  ASSERT_TRUE(IsMounted(daemon.mountpoint()));
  const auto start = Clock::now();
  ASSERT_EQ(::kill(daemon.pid(), signal), 0);
  const std::optional<int> status = daemon.ExitStatusWithin(kWaitBound);
  const long ms = MillisecondsSince(start);
  Report(signal == SIGTERM ? "SIGTERM to a daemon" : "SIGINT to a daemon", transport, ms);
  ASSERT_TRUE(status.has_value()) << "the daemon did not exit";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "wait status " << *status;
  EXPECT_LT(ms, kEndBound.count());
  EXPECT_FALSE(IsMounted(daemon.mountpoint()));
}

TEST_P(Teardown, SigtermEndsADaemon) { ExpectSignalEndsDaemon(GetParam(), SIGTERM); }

TEST_P(Teardown, SigintEndsADaemon) { ExpectSignalEndsDaemon(GetParam(), SIGINT); }

// A killed daemon leaves its mount behind, dead: every client call must fail at once, not hang,
// and within a second the mount settles on ENOTCONN.
//
// Over the io_uring transports the kernel tears the dead daemon's rings down after the process
// is reaped, and until it has, a request can still be queued: it then fails with ECANCELED (a
// uring-cmd entry of the dead task took it) or ECONNABORTED (the abort that the rings' last
// reference to /dev/fuse brings ended it). Seen here in that order, each within milliseconds.
TEST_P(Teardown, KillNineLeavesADeadMountThatClientsSeeAsNotConnected) {
  Daemon daemon;
  ASSERT_TRUE(daemon.Start({GetParam()}).ok());
  ASSERT_EQ(::kill(daemon.pid(), SIGKILL), 0);
  ASSERT_TRUE(daemon.ExitStatusWithin(kWaitBound).has_value()) << "the killed daemon lingers";
  ASSERT_TRUE(IsMounted(daemon.mountpoint()));

  std::vector<int> errors;  // what each stat() saw, in order; a new name each time, never cached
  const auto start = Clock::now();
  while ((errors.empty() || errors.back() != ENOTCONN) && Clock::now() - start < kEndBound) {
    int result = 0;
    int error = 0;
    const bool returned = FinishesWithin(
        kWaitBound,
        [&] {
          struct stat st;
          result = ::stat(daemon.Path("name" + std::to_string(errors.size())).c_str(), &st);
          error = errno;
        },
        [&] { (void)AbortConnection(daemon.connection_id()); });
    ASSERT_TRUE(returned) << "stat hung on the dead mount";
    EXPECT_EQ(result, -1);
    errors.push_back(error);
  }
  std::string seen;
  for (int error : errors) seen += std::string(seen.empty() ? "" : ", ") + strerrorname_np(error);
  Report(("stat on a killed daemon's mount until ENOTCONN: " + seen).c_str(), GetParam(),
         MillisecondsSince(start));
  EXPECT_EQ(errors.back(), ENOTCONN) << "the dead mount did not settle on ENOTCONN: " << seen;
  for (int error : errors) {
    EXPECT_TRUE(error == ENOTCONN || error == ECONNABORTED || error == ECANCELED) << seen;
  }

  ASSERT_EQ(::umount2(daemon.mountpoint().c_str(), MNT_DETACH), 0) << std::strerror(errno);
  EXPECT_FALSE(IsMounted(daemon.mountpoint()));
}

// The daemon dies while it holds a client's OPEN: the client must get an error, not wait forever
// (or in uninterruptible sleep) for an answer nobody will send.
TEST_P(Teardown, DaemonDeathReleasesAClientBlockedInARequest) {
  Daemon daemon;
  ASSERT_TRUE(daemon.Start({GetParam(), /*hold_opens=*/true}).ok());
  int result = 0;
  int error = 0;
  std::promise<void> returned;
  std::future<void> returned_future = returned.get_future();
  std::thread client([&] {
    result = ::open(daemon.Path("file").c_str(), O_RDONLY);
    error = errno;
    returned.set_value();
  });
  const bool held = daemon.ReadLine(kWaitBound) == "held";
  const auto start = Clock::now();
  ::kill(daemon.pid(), SIGKILL);
  const bool reaped = daemon.ExitStatusWithin(kWaitBound).has_value();
  const bool in_time = returned_future.wait_for(kWaitBound) == std::future_status::ready;
  const long ms = MillisecondsSince(start);
  const int in_disk_sleep = ThreadsInDiskSleep();
  if (!in_time) (void)AbortConnection(daemon.connection_id());
  client.join();
  if (result >= 0) ::close(result);
  Report(
      absl::StrFormat("client released after its daemon died (%s)", std::strerror(error)).c_str(),
      GetParam(), ms);

  ASSERT_TRUE(held) << "the daemon never held the OPEN";
  EXPECT_TRUE(reaped) << "the killed daemon did not exit";
  ASSERT_TRUE(in_time) << "the client stayed blocked after its daemon died";
  EXPECT_EQ(result, -1);
  EXPECT_TRUE(error == ENOTCONN || error == ECONNABORTED) << std::strerror(error);
  EXPECT_LT(ms, kEndBound.count());
  EXPECT_EQ(in_disk_sleep, 0);
}

INSTANTIATE_TEST_SUITE_P(Transports, Teardown, kEveryTransport, TransportTestName);

}  // namespace
}  // namespace ringfuse::testing
