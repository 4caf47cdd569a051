// ringfuse-ctl supervise as a user runs it: ringfused killed with SIGKILL is started again on the
// same connection, and the mount serves on. Calls by path never fail, a request the dead daemon
// was in the middle of is answered by the next, fsync'ed bytes stay, the published revision
// stays; files open across the crash fail cleanly; the keeper gives up after its limit, ends
// with the daemon, and refuses what cannot be kept.
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/ringfused_fixture.h"
#include "tests/open_fds.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::OpenFdCount;
using ringfuse::testing::OpenFdCountExceptPaths;
using ::testing::HasSubstr;

// How long a client may wait for the daemon started after a crash (ASan builds start slowly).
constexpr auto kRecoveryBound = std::chrono::seconds(10);

class RingfusedSupervise : public RingfusedBinary {
 protected:
  void SetUp() override {
    RingfusedBinary::SetUp();
    source_ = dir_.path() + "/source";
    std::filesystem::create_directories(source_ + "/tree/sub");
    WriteFile(source_ + "/before", "in the source\n");
    WriteFile(source_ + "/tree/sub/data", "data\n");
    ASSERT_EQ(::symlink("sub/data", (source_ + "/tree/link").c_str()), 0);
    log_ = dir_.path() + "/supervise.log";
  }

  // The daemon dies first, so that the keeper's end does not leave it serving alone.
  void TearDown() override {
    if (daemon_pid_ > 0) {
      if (const pid_t daemon = DaemonPid(); daemon > 0) ::kill(daemon, SIGKILL);
      ::kill(daemon_pid_, SIGKILL);
      ::waitpid(daemon_pid_, nullptr, 0);
      daemon_pid_ = -1;
    }
    RingfusedBinary::TearDown();
  }

  // `ringfuse-ctl supervise FLAGS -- ringfused ARGS` as this test's child (daemon_pid_ is the
  // keeper's pid), its output in log_; waits until the daemon answers (and so has given the
  // keeper its connection, which comes before the first request: killed earlier, it would leave
  // nothing to keep). launch.binary is ringfused's. A user's mount, which this test's root may
  // not look at, is only waited for until mounted.
  void StartSupervised(const std::vector<std::string>& daemon_args,
                       const std::vector<std::string>& flags = {}, Launch launch = {},
                       const std::string& ctl = RINGFUSE_CTL_BINARY) {
    const bool users_mount = launch.user.has_value();
    std::vector<std::string> args = {"supervise"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back("--");
    args.push_back(launch.binary);
    args.insert(args.end(), daemon_args.begin(), daemon_args.end());
    launch.binary = ctl;
    StartInForeground(args, log_, launch);
    if (!users_mount) {
      ASSERT_TRUE(AnswersWithin(kRecoveryBound));
    }
  }

  // The keeper's child, the daemon serving now; -1 while there is none.
  pid_t DaemonPid() const {
    const std::string keeper = std::to_string(daemon_pid_);
    std::ifstream children("/proc/" + keeper + "/task/" + keeper + "/children");
    pid_t pid = -1;
    children >> pid;
    return pid;
  }

  // Kills the daemon with SIGKILL and returns once the next one answers (or -1 past the bound).
  pid_t KillDaemonAndAwaitTheNext() {
    const pid_t dead = DaemonPid();
    EXPECT_GT(dead, 0);
    if (dead <= 0 || ::kill(dead, SIGKILL) != 0) return -1;
    const auto deadline = Clock::now() + kRecoveryBound;
    pid_t next = -1;
    while ((next = DaemonPid()) <= 0 || next == dead) {
      if (Clock::now() > deadline) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return AnswersWithin(kRecoveryBound) ? next : -1;
  }

  // A daemon answers within `bound`: the LOOKUP of a name never asked for before, which the
  // kernel cannot answer from its cache, comes back ENOENT.
  bool AnswersWithin(std::chrono::milliseconds bound) {
    const std::string never_seen = mountpoint_ + "/never-seen-" + std::to_string(++probes_);
    auto answered = std::async(std::launch::async, [never_seen] {
      struct stat attr {};
      return ::stat(never_seen.c_str(), &attr) == 0 ? 0 : errno;
    });
    if (answered.wait_for(bound) == std::future_status::ready) {
      const int error = answered.get();
      EXPECT_EQ(error, ENOENT) << "stat of a missing name: " << std::strerror(error) << "\n"
                               << ReadFile(log_);
      return error == ENOENT;
    }
    ADD_FAILURE() << "the mount was not served again within the bound:\n" << ReadFile(log_);
    ::kill(daemon_pid_, SIGKILL);  // the keeper's end lets the stat return with ENOTCONN
    if (const pid_t daemon = DaemonPid(); daemon > 0) ::kill(daemon, SIGKILL);
    return false;
  }

  // SIGTERM to the keeper: it passes it on, the daemon unmounts, both exit 0.
  void StopWithSigterm() {
    ASSERT_EQ(::kill(daemon_pid_, SIGTERM), 0);
    const int status = WaitBounded(daemon_pid_, std::chrono::seconds(10));
    daemon_pid_ = -1;
    EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << "\n"
                                                                              << ReadFile(log_);
    EXPECT_TRUE(WaitUntilUnmounted(std::chrono::seconds(5)));
  }

  // That fresh names, reads, listings, links and creates work, through whichever daemon.
  void ExpectServes(const std::string& created) {
    EXPECT_EQ(ReadFile(mountpoint_ + "/before"), "in the source\n");
    EXPECT_EQ(ReadFile(mountpoint_ + "/tree/sub/data"), "data\n");
    char target[64] = {};
    EXPECT_EQ(::readlink((mountpoint_ + "/tree/link").c_str(), target, sizeof(target)), 8)
        << std::strerror(errno);
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(mountpoint_ + "/tree"),
                            std::filesystem::directory_iterator()),
              2);
    WriteFile(mountpoint_ + "/" + created, "made through the mount\n");
    EXPECT_EQ(ReadFile(source_ + "/" + created), "made through the mount\n");
  }

  std::string source_, log_;
  int probes_ = 0;
};

class SupervisedTransports : public RingfusedSupervise,
                             public ::testing::WithParamInterface<std::string> {};

// Killed twice, the daemon is started again each time on the same mount: every name cached
// before works after, new ones too; a file opened before the crash reads on.
TEST_P(SupervisedTransports, AKilledDaemonIsStartedAgainAndTheMountServesOn) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  StartSupervised({"--transport=" + GetParam(), source_, mountpoint_});
  ExpectServes("made-first");
  const base::UniqueFd opened_before(::open((mountpoint_ + "/before").c_str(), O_RDONLY));
  ASSERT_TRUE(opened_before.valid()) << std::strerror(errno);
  pid_t serving = DaemonPid();
  for (int crash = 1; crash <= 2; ++crash) {
    SCOPED_TRACE("crash " + std::to_string(crash));
    const pid_t next = KillDaemonAndAwaitTheNext();
    ASSERT_GT(next, 0);
    EXPECT_NE(next, serving);
    serving = next;
    EXPECT_TRUE(IsMounted(mountpoint_));
    ExpectServes("made-after-" + std::to_string(crash));
    EXPECT_THAT(ReadFile(log_),
                HasSubstr("recovered " + mountpoint_ + " after a crash (incarnation " +
                          std::to_string(crash) + ")"));
  }
  char buffer[32] = {};
  EXPECT_EQ(::read(opened_before.get(), buffer, sizeof(buffer)), 14) << std::strerror(errno);
  EXPECT_STREQ(buffer, "in the source\n");
  const std::string log = ReadFile(log_);
  EXPECT_THAT(
      log, HasSubstr("was killed by signal 9 (Killed); starting it again to serve " + mountpoint_));
  StopWithSigterm();
}

// A LOOKUP the dead daemon had read and never answered (RINGFUSED_TEST_HANG_ON_LOOKUP holds it
// there) is sent again to the next daemon, which answers it: the caller only waited.
TEST_F(RingfusedSupervise, ARequestTheDeadDaemonHadReadIsAnsweredByTheNext) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  WriteFile(source_ + "/stuck", "answered at last\n");
  ::setenv("RINGFUSED_TEST_HANG_ON_LOOKUP", "stuck", 1);
  StartSupervised({"--transport=threads", source_, mountpoint_}, {},
                  {.binary = RINGFUSED_HOOKED_BINARY});
  ::unsetenv("RINGFUSED_TEST_HANG_ON_LOOKUP");
  auto looked_up = std::async(std::launch::async, [path = mountpoint_ + "/stuck"] {
    struct stat attr {};
    return ::stat(path.c_str(), &attr) == 0 ? 0 : errno;
  });
  ASSERT_EQ(looked_up.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "the LOOKUP was answered: the hook did not hold it, and the test would prove nothing";
  ASSERT_GT(KillDaemonAndAwaitTheNext(), 0);
  ASSERT_EQ(looked_up.wait_for(kRecoveryBound), std::future_status::ready);
  EXPECT_EQ(looked_up.get(), 0) << "the held request failed instead of being resent";
  EXPECT_EQ(ReadFile(mountpoint_ + "/stuck"), "answered at last\n");
  StopWithSigterm();
}

// How often the process `pid` was switched to: voluntary and involuntary context switches.
long ContextSwitches(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  long switches = 0;
  for (std::string line; std::getline(status, line);) {
    if (line.find("ctxt_switches:") != std::string::npos) {
      switches += std::stol(line.substr(line.find(':') + 1));
    }
  }
  return switches;
}

// The keeper holds the connection but never reads it: it must not be woken by the requests that
// go past it to the daemon (the kernel wakes every poller of /dev/fuse at each request queued).
TEST_F(RingfusedSupervise, TheKeeperSleepsWhileTheDaemonServes) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  StartSupervised({"--transport=threads", source_, mountpoint_});
  constexpr int kRequests = 2000;
  const long before = ContextSwitches(daemon_pid_);
  for (int i = 0; i < kRequests; ++i) {
    struct stat attr {};
    // A name never asked for before: a LOOKUP the kernel cannot answer from its cache.
    ASSERT_NE(::stat((mountpoint_ + "/asked-" + std::to_string(i)).c_str(), &attr), 0);
  }
  const long woken = ContextSwitches(daemon_pid_) - before;
  EXPECT_LT(woken, kRequests / 20)
      << "the keeper was woken " << woken << " times by " << kRequests << " requests";
  StopWithSigterm();
}

// A change the dead daemon made and never answered is answered by the next as made, not made
// again; one it had not made yet is made (daemon/crash/change_journal.h).
// RINGFUSED_TEST_HANG_IN_CHANGE holds the request in the daemon at a point of its change: "begun"
// (recorded, the backing call not made), "made" (the call returned, not yet recorded: what a kill
// in the middle of that call leaves) or "recorded" (before the reply). The test kills the daemon
// there, and the kernel sends the request again to the next daemon. Made again, each would fail
// (EEXIST, ENOENT) or be done twice (an exchange swapped back, an append appended twice); taken as
// made when it was not, an unlink of a name already gone would succeed.
struct OnceCase {
  std::string name;
  std::string point;    // where the change is held
  std::string subject;  // what it changes, as the hook names it
  // Run once the mount serves, before the call.
  std::function<void(const std::string& source, const std::string& mount)> prepare;
  std::function<int(const std::string& mount)> call;  // 0 or the errno it failed with
  int expected_error = 0;
  std::function<void(const std::string& source)> expect_once;
  // Run in SOURCE while the change is held, before the kill: what another user does meanwhile.
  std::function<void(const std::string& source)> while_held = nullptr;
};

void PrintTo(const OnceCase& change, std::ostream* out) { *out << change.name; }

int Errno(bool ok) { return ok ? 0 : errno; }
bool Exists(const std::string& path) {
  struct stat attr {};
  return ::lstat(path.c_str(), &attr) == 0;
}
bool IsDirectory(const std::string& path) { return std::filesystem::is_directory(path); }

// Writes `data` to a file it creates exclusively, then closes it.
int CreateAndWrite(const std::string& path, const std::string& data) {
  const base::UniqueFd fd(::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644));
  if (!fd.valid()) return errno;
  return Errno(::write(fd.get(), data.data(), data.size()) == static_cast<ssize_t>(data.size()));
}

int Append(const std::string& path, const std::string& data) {
  const base::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_APPEND));
  if (!fd.valid()) return errno;
  return Errno(::write(fd.get(), data.data(), data.size()) == static_cast<ssize_t>(data.size()));
}

std::vector<OnceCase> OnceCases() {
  const auto nothing = [](const std::string&, const std::string&) {};
  const auto mkdir_case = [&](const std::string& point) {
    return OnceCase{
        "MkdirKilledAt_" + point,
        point,
        "made-dir",
        nothing,
        [](const std::string& m) { return Errno(::mkdir((m + "/made-dir").c_str(), 0755) == 0); },
        0,
        [](const std::string& s) { EXPECT_TRUE(IsDirectory(s + "/made-dir")); }};
  };
  const auto create_case = [&](const std::string& point) {
    return OnceCase{
        "ExclusiveCreateKilledAt_" + point,
        point,
        "created",
        nothing,
        [](const std::string& m) { return CreateAndWrite(m + "/created", "written once\n"); },
        0,
        [](const std::string& s) { EXPECT_EQ(ReadFile(s + "/created"), "written once\n"); }};
  };
  std::vector<OnceCase> cases;
  for (const char* point : {"begun", "made", "recorded"}) {
    cases.push_back(mkdir_case(point));
    cases.push_back(create_case(point));
  }
  cases.push_back(
      {"SymlinkKilledAt_made", "made", "new-link", nothing,
       [](const std::string& m) {
         return Errno(::symlink("before", (m + "/new-link").c_str()) == 0);
       },
       0, [](const std::string& s) { EXPECT_EQ(ReadFile(s + "/new-link"), "in the source\n"); }});
  cases.push_back(
      {"UnlinkKilledAt_made", "made", "doomed",
       [](const std::string& s, const std::string&) { WriteFile(s + "/doomed", "x"); },
       [](const std::string& m) { return Errno(::unlink((m + "/doomed").c_str()) == 0); }, 0,
       [](const std::string& s) { EXPECT_FALSE(Exists(s + "/doomed")); }});
  // The kernel still knows the name (cached for the entry timeout, 1 s) when it is gone from
  // the source: its UNLINK reaches the daemon, whose backing call answers ENOENT, made or not.
  cases.push_back(
      {"UnlinkOfANameGoneFromTheSourceKilledAt_begun", "begun", "vanished",
       [](const std::string& s, const std::string& m) {
         WriteFile(s + "/vanished", "x");
         EXPECT_TRUE(Exists(m + "/vanished"));
         ASSERT_EQ(::unlink((s + "/vanished").c_str()), 0);
       },
       [](const std::string& m) { return Errno(::unlink((m + "/vanished").c_str()) == 0); }, ENOENT,
       [](const std::string& s) { EXPECT_FALSE(Exists(s + "/vanished")); }});
  cases.push_back(
      {"RmdirKilledAt_made", "made", "empty-dir",
       [](const std::string& s, const std::string&) {
         std::filesystem::create_directory(s + "/empty-dir");
       },
       [](const std::string& m) { return Errno(::rmdir((m + "/empty-dir").c_str()) == 0); }, 0,
       [](const std::string& s) { EXPECT_FALSE(Exists(s + "/empty-dir")); }});
  cases.push_back(
      {"RenameKilledAt_made", "made", "moving",
       [](const std::string& s, const std::string&) { WriteFile(s + "/moving", "moved\n"); },
       [](const std::string& m) {
         return Errno(::rename((m + "/moving").c_str(), (m + "/moved").c_str()) == 0);
       },
       0,
       [](const std::string& s) {
         EXPECT_FALSE(Exists(s + "/moving"));
         EXPECT_EQ(ReadFile(s + "/moved"), "moved\n");
       }});
  cases.push_back({"ExchangeKilledAt_made", "made", "left",
                   [](const std::string& s, const std::string&) {
                     WriteFile(s + "/left", "L");
                     WriteFile(s + "/right", "R");
                   },
                   [](const std::string& m) {
                     return Errno(::renameat2(AT_FDCWD, (m + "/left").c_str(), AT_FDCWD,
                                              (m + "/right").c_str(), RENAME_EXCHANGE) == 0);
                   },
                   0,
                   [](const std::string& s) {
                     EXPECT_EQ(ReadFile(s + "/left"), "R") << "exchanged twice";
                     EXPECT_EQ(ReadFile(s + "/right"), "L");
                   }});
  // Another user makes the name in SOURCE after the dead daemon recorded the change begun: the
  // caller's exclusive create and mkdir are not answered as made on that user's file.
  const auto bobs = [](const std::string& path) {
    struct stat attr {};
    return ::lstat(path.c_str(), &attr) == 0 && attr.st_uid == kBob.uid;
  };
  cases.push_back(
      {"ExclusiveCreateOfANameAnotherUserMadeMeanwhile", "begun", "contested", nothing,
       [](const std::string& m) { return CreateAndWrite(m + "/contested", "the caller's\n"); },
       EEXIST,
       [bobs](const std::string& s) {
         EXPECT_EQ(ReadFile(s + "/contested"), "bob's\n");
         EXPECT_TRUE(bobs(s + "/contested"));
       },
       [](const std::string& s) {
         WriteFile(s + "/contested", "bob's\n");
         ASSERT_EQ(::chown((s + "/contested").c_str(), kBob.uid, kBob.gid), 0);
       }});
  cases.push_back({"MkdirOfANameAnotherUserMadeMeanwhile", "begun", "contested-dir", nothing,
                   [](const std::string& m) {
                     return Errno(::mkdir((m + "/contested-dir").c_str(), 0755) == 0);
                   },
                   EEXIST,
                   [bobs](const std::string& s) { EXPECT_TRUE(bobs(s + "/contested-dir")); },
                   [](const std::string& s) {
                     ASSERT_EQ(::mkdir((s + "/contested-dir").c_str(), 0700), 0);
                     ASSERT_EQ(::chown((s + "/contested-dir").c_str(), kBob.uid, kBob.gid), 0);
                   }});
  for (const char* point : {"begun", "made"}) {
    cases.push_back(
        {std::string("AppendKilledAt_") + point, point, "appended once\n",
         [](const std::string& s, const std::string&) { WriteFile(s + "/log", "first\n"); },
         [](const std::string& m) { return Append(m + "/log", "appended once\n"); }, 0,
         [](const std::string& s) { EXPECT_EQ(ReadFile(s + "/log"), "first\nappended once\n"); }});
  }
  return cases;
}

class ChangesMadeOnce : public RingfusedSupervise,
                        public ::testing::WithParamInterface<OnceCase> {};

TEST_P(ChangesMadeOnce, AChangeIsMadeOnceWhereverTheDaemonIsKilled) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const OnceCase& change = GetParam();
  ::setenv("RINGFUSED_TEST_HANG_IN_CHANGE", (change.point + ":" + change.subject).c_str(), 1);
  StartSupervised({"--transport=threads", source_, mountpoint_}, {},
                  {.binary = RINGFUSED_HOOKED_BINARY});
  ::unsetenv("RINGFUSED_TEST_HANG_IN_CHANGE");
  change.prepare(source_, mountpoint_);
  auto called = std::async(std::launch::async, [&] { return change.call(mountpoint_); });
  const std::string held = "holding the change of " + change.subject + " at " + change.point + "\n";
  const auto deadline = Clock::now() + kRecoveryBound;
  while (ReadFile(log_).find(held) == std::string::npos && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_THAT(ReadFile(log_), HasSubstr(held)) << "the change never reached its point";
  ASSERT_EQ(called.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout)
      << "the change was answered: the hook did not hold it, and the test would prove nothing";
  if (change.while_held) {
    ASSERT_NO_FATAL_FAILURE(change.while_held(source_));
  }
  ASSERT_GT(KillDaemonAndAwaitTheNext(), 0);
  ASSERT_EQ(called.wait_for(kRecoveryBound), std::future_status::ready);
  const int error = called.get();
  EXPECT_EQ(error, change.expected_error) << std::strerror(error);
  change.expect_once(source_);
  StopWithSigterm();
}
INSTANTIATE_TEST_SUITE_P(, ChangesMadeOnce, ::testing::ValuesIn(OnceCases()),
                         [](const auto& test) { return test.param.name; });

// Clients working by path while the daemon is killed 20 times. What each call may see:
// - by path (stat, readlink, open, opendir): success, always;
// - on a file opened before a crash (read, write, fsync): success, its open reopened;
// - on a directory opened before a crash (readdir): success, its open reopened;
// - a create or unlink in flight at a crash: success, made once (ChangesMadeOnce).
// Any failure fails the test, and every file created, written and fsync'ed is in the source.
class CrashLoad {
 public:
  CrashLoad(const std::string& root, int clients) {
    for (int c = 0; c < clients; ++c) threads_.emplace_back([this, root, c] { Work(root, c); });
  }
  ~CrashLoad() { Finish(); }
  void Finish() {
    done_ = true;
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }
  std::map<std::string, std::string> committed() const { return committed_; }
  std::string unexpected() const { return unexpected_; }
  int unexpected_count() const { return unexpected_count_; }
  long calls() const { return calls_; }

 private:
  // A failed call; `call` names the kind of call alone.
  void Failed(const std::string& call) {
    const int error = errno;
    std::lock_guard lock(mutex_);
    if (unexpected_count_++ < 5) unexpected_ += call + ": " + std::strerror(error) + "\n";
  }

  void ReadWhole(const std::string& path) {
    const base::UniqueFd fd(::open(path.c_str(), O_RDONLY));
    if (!fd.valid()) return Failed("open");
    char buffer[64];
    if (::read(fd.get(), buffer, sizeof(buffer)) != 5) Failed("read");
  }

  void List(const std::string& path) {
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) return Failed("opendir");
    errno = 0;
    int entries = 0;
    while (::readdir(dir) != nullptr) ++entries;
    if (errno != 0) Failed("readdir");
    ::closedir(dir);
  }

  // Created, written, fsync'ed and closed: then it must be in the source afterwards.
  void Commit(const std::string& root, const std::string& name) {
    const base::UniqueFd fd(::open((root + "/" + name).c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644));
    if (!fd.valid()) return Failed("create");
    const std::string content = "content of " + name + "\n";
    if (::write(fd.get(), content.data(), content.size()) != static_cast<ssize_t>(content.size())) {
      return Failed("write");
    }
    if (::fsync(fd.get()) != 0) return Failed("fsync");
    std::lock_guard lock(mutex_);
    committed_[name] = content;
  }

  void Work(const std::string& root, int client) {
    for (long i = 0; !done_; ++i) {
      struct stat attr {};
      if (::stat((root + "/tree/sub/data").c_str(), &attr) != 0) Failed("stat");
      char target[64];
      if (::readlink((root + "/tree/link").c_str(), target, sizeof(target)) != 8) {
        Failed("readlink");
      }
      ReadWhole(root + "/tree/sub/data");
      List(root + "/tree");
      const std::string name = "c" + std::to_string(client) + "-" + std::to_string(i);
      Commit(root, name);
      const std::string scratch = root + "/scratch-" + std::to_string(client);
      const int made = ::open(scratch.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
      if (made < 0) {
        Failed("create scratch");
      } else {
        ::close(made);
      }
      if (::unlink(scratch.c_str()) != 0) Failed("unlink scratch");
      calls_ += 11;
    }
  }

  std::atomic<bool> done_{false};
  std::atomic<long> calls_{0};
  mutable std::mutex mutex_;
  std::map<std::string, std::string> committed_;
  std::string unexpected_;
  int unexpected_count_ = 0;
  std::vector<std::thread> threads_;
};

TEST_P(SupervisedTransports, TwentyCrashesUnderLoadFailNoCallAndLoseNoFsyncedByte) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  StartSupervised({"--transport=" + GetParam(), source_, mountpoint_}, {"--restarts=25"});
  size_t keeper_fds = 0, first_daemon_fds = 0, most_daemon_fds = 0;
  {
    CrashLoad load(mountpoint_, 4);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    first_daemon_fds = OpenFdCountExceptPaths(DaemonPid());
    const size_t first_all_fds = OpenFdCount(DaemonPid());
    for (int crash = 1; crash <= 20; ++crash) {
      ASSERT_GT(KillDaemonAndAwaitTheNext(), 0) << "crash " << crash;
      if (crash == 1) keeper_fds = OpenFdCount(daemon_pid_);  // it holds the connection now
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      most_daemon_fds = std::max(most_daemon_fds, OpenFdCountExceptPaths(DaemonPid()));
    }
    load.Finish();
    EXPECT_EQ(load.unexpected_count(), 0) << load.unexpected();
    EXPECT_GT(load.calls(), 1000) << "the clients did almost nothing";
    std::printf(
        "%ld calls across 20 crashes, %d failed; daemon fds besides O_PATH: %zu, "
        "at most %zu after a crash (%zu then %zu in all)\n",
        load.calls(), load.unexpected_count(), first_daemon_fds, most_daemon_fds, first_all_fds,
        OpenFdCount(DaemonPid()));
    for (const auto& [name, content] : load.committed()) {
      EXPECT_EQ(ReadFile(source_ + "/" + name), content) << name << " was fsync'ed but is lost";
    }
    EXPECT_GT(load.committed().size(), 20u);
  }
  EXPECT_EQ(OpenFdCount(daemon_pid_), keeper_fds) << "the keeper's fds grew";
  // Besides O_PATH fds: a recovered daemon holds those of the nodes the kernel still caches, which
  // grow with the files the clients made.
  EXPECT_LE(most_daemon_fds, first_daemon_fds + 16) << "the daemons' fds grew";
  StopWithSigterm();
}
INSTANTIATE_TEST_SUITE_P(, SupervisedTransports, ::testing::Values("threads", "uring"));

// The fh values the dead daemon gave out stay the kernel's, in the files open across the crash:
// the next daemon reopens those files under them (the open-file journal) and gives out others
// for its own opens, so a file open across the crash reads and writes its own bytes, never a file
// opened after it under the same fh.
TEST_F(RingfusedSupervise, AFileOpenAcrossTheCrashReadsAndWritesItselfNeverAnother) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  constexpr int kFiles = 8;
  const auto name = [](const char* prefix, int i) { return prefix + std::to_string(i); };
  for (int i = 0; i < kFiles; ++i) WriteFile(source_ + "/" + name("old", i), "old\n");
  for (int i = 0; i < kFiles; ++i) WriteFile(source_ + "/" + name("new", i), "new\n");
  StartSupervised({"--transport=threads", source_, mountpoint_});
  std::vector<base::UniqueFd> opened_before;
  for (int i = 0; i < kFiles; ++i) {
    opened_before.emplace_back(::open((mountpoint_ + "/" + name("old", i)).c_str(), O_RDWR));
    ASSERT_TRUE(opened_before.back().valid()) << std::strerror(errno);
  }
  ASSERT_GT(KillDaemonAndAwaitTheNext(), 0);
  std::vector<base::UniqueFd> opened_after;
  for (int i = 0; i < kFiles; ++i) {
    opened_after.emplace_back(::open((mountpoint_ + "/" + name("new", i)).c_str(), O_RDONLY));
    ASSERT_TRUE(opened_after.back().valid()) << std::strerror(errno);
  }
  for (int i = 0; i < kFiles; ++i) {
    char buffer[8] = {};
    EXPECT_EQ(::pread(opened_before[i].get(), buffer, sizeof(buffer), 0), 4)
        << std::strerror(errno);
    EXPECT_STREQ(buffer, "old\n") << "a file opened before the crash read another";
    EXPECT_EQ(::pwrite(opened_before[i].get(), "OLD", 3, 0), 3) << std::strerror(errno);
    EXPECT_EQ(::fsync(opened_before[i].get()), 0) << std::strerror(errno);
    // fstat, which the kernel sends by node id alone (cat and most tools ask it before they
    // read); forced past the kernel's attribute cache, so that the daemon answers.
    struct statx attr {};
    EXPECT_EQ(
        ::statx(opened_before[i].get(), "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_SIZE, &attr),
        0)
        << std::strerror(errno);
    EXPECT_EQ(attr.stx_size, 4u);
    EXPECT_EQ(::pread(opened_after[i].get(), buffer, sizeof(buffer), 0), 4);
    EXPECT_STREQ(buffer, "new\n");
  }
  opened_before.clear();  // closed: RELEASE of a reopened fh
  for (int i = 0; i < kFiles; ++i) EXPECT_EQ(ReadFile(source_ + "/" + name("old", i)), "OLD\n");
  StopWithSigterm();
}

// With kernel passthrough the kernel reads and writes a file opened before the crash through its
// backing file, without the daemon: such a file goes on working, and closes.
TEST_F(RingfusedSupervise, AKernelPassthroughFileReadsAndWritesOnAcrossTheCrash) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  StartSupervised({"--transport=threads", "-o", "passthrough", source_, mountpoint_});
  base::UniqueFd opened_before(::open((mountpoint_ + "/before").c_str(), O_RDWR));
  ASSERT_TRUE(opened_before.valid()) << std::strerror(errno);
  ASSERT_GT(KillDaemonAndAwaitTheNext(), 0);
  char buffer[32] = {};
  EXPECT_EQ(::pread(opened_before.get(), buffer, sizeof(buffer), 0), 14) << std::strerror(errno);
  EXPECT_STREQ(buffer, "in the source\n");
  EXPECT_EQ(::pwrite(opened_before.get(), "IN", 2, 0), 2) << std::strerror(errno);
  EXPECT_EQ(::fsync(opened_before.get()), 0) << std::strerror(errno);
  EXPECT_EQ(::close(opened_before.release()), 0) << std::strerror(errno);
  EXPECT_EQ(ReadFile(source_ + "/before"), "IN the source\n");
  StopWithSigterm();
}

// Locks belong to the dead daemon's open files, which its death closed: a lock held before the
// crash is not held after it, and another open takes it (the documented loss).
TEST_F(RingfusedSupervise, LocksHeldBeforeTheCrashAreLost) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  StartSupervised({"--transport=threads", source_, mountpoint_});
  const base::UniqueFd holder(::open((mountpoint_ + "/before").c_str(), O_RDWR));
  ASSERT_TRUE(holder.valid()) << std::strerror(errno);
  ASSERT_EQ(::flock(holder.get(), LOCK_EX), 0) << std::strerror(errno);
  const auto other_takes_it = [&] {
    const base::UniqueFd other(::open((mountpoint_ + "/before").c_str(), O_RDWR));
    return ::flock(other.get(), LOCK_EX | LOCK_NB) == 0;
  };
  ASSERT_FALSE(other_takes_it()) << "the lock does not hold even before the crash";
  ASSERT_GT(KillDaemonAndAwaitTheNext(), 0);
  EXPECT_TRUE(other_takes_it()) << "a lock survived the crash: update docs/crash-recovery.md";
  StopWithSigterm();
}

// A directory open across a crash lists on where it stood: the next daemon reopens it under the
// same fh (the open-file journal) and seeks to the cookie the kernel asks for; every entry once.
TEST_F(RingfusedSupervise, ADirectoryOpenAcrossTheCrashListsOnEachEntryOnce) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  constexpr int kEntries = 3000;  // many READDIRs: more than one getdents of readdir(3)'s buffer
  std::filesystem::create_directory(source_ + "/many");
  for (int i = 0; i < kEntries; ++i) {
    WriteFile(source_ + "/many/entry-with-a-longish-name-" + std::to_string(i), "");
  }
  StartSupervised({"--transport=threads", source_, mountpoint_});
  DIR* listing = ::opendir((mountpoint_ + "/many").c_str());
  ASSERT_NE(listing, nullptr) << std::strerror(errno);
  std::set<std::string> listed;
  for (int i = 0; i < 10; ++i) {
    const dirent* entry = ::readdir(listing);
    ASSERT_NE(entry, nullptr);
    listed.insert(entry->d_name);
  }
  ASSERT_GT(KillDaemonAndAwaitTheNext(), 0);
  errno = 0;
  for (const dirent* entry; (entry = ::readdir(listing)) != nullptr;) {
    EXPECT_TRUE(listed.insert(entry->d_name).second) << entry->d_name << " listed twice";
  }
  EXPECT_EQ(errno, 0) << "the listing failed after the crash: " << std::strerror(errno);
  ::closedir(listing);
  EXPECT_EQ(listed.size(), kEntries + 2u);  // with . and ..
  StopWithSigterm();
}

// A working directory inside the mount is a node of the dead daemon's, which the next one
// recovered from the node journal: paths relative to it work on (before the journal: ESTALE).
TEST_F(RingfusedSupervise, AWorkingDirectoryInsideTheMountWorksOnAfterACrash) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  StartSupervised({"--transport=threads", source_, mountpoint_});
  const base::UniqueFd directory(::open((mountpoint_ + "/tree").c_str(), O_PATH | O_DIRECTORY));
  ASSERT_TRUE(directory.valid()) << std::strerror(errno);
  struct stat attr {};
  ASSERT_EQ(::fstatat(directory.get(), "sub/data", &attr, 0), 0) << std::strerror(errno);
  for (int crash = 1; crash <= 2; ++crash) {  // the second from a journal the first one adopted
    ASSERT_GT(KillDaemonAndAwaitTheNext(), 0);
    // Past the kernel's caches: a GETATTR of the dead daemon's node, then a SETATTR.
    struct statx fresh {};
    EXPECT_EQ(::statx(directory.get(), "sub/data", AT_STATX_FORCE_SYNC, STATX_BASIC_STATS, &fresh),
              0)
        << "crash " << crash << ": " << std::strerror(errno);
    EXPECT_EQ(::fchmodat(directory.get(), "sub/data", 0640, 0), 0)
        << "crash " << crash << ": " << std::strerror(errno);
  }
  EXPECT_EQ(::stat((source_ + "/tree/sub/data").c_str(), &attr), 0);
  EXPECT_EQ(attr.st_mode & 07777, 0640u);
  StopWithSigterm();
}

// In revisions mode the daemon started after a crash serves the revision last published, which
// the keeper kept, not the one on its command line; without a publish (the control), the one on
// the command line, not the newest.
TEST_F(RingfusedSupervise, ThePublishedRevisionSurvivesACrash) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  StartSupervised({"--revisions", "--revision=r1", "--transport=threads", repo_, mountpoint_});
  EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "one\n");
  ASSERT_GT(KillDaemonAndAwaitTheNext(), 0);
  EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "one\n") << "a crash changed the revision";
  const Outcome published = RunCommand({RINGFUSE_CTL_BINARY, "publish", mountpoint_, "r2"});
  ASSERT_EQ(published.exit_code, 0) << published.output;
  EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "two, longer\n");
  ASSERT_GT(KillDaemonAndAwaitTheNext(), 0);
  EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "two, longer\n") << "the crash lost the publish";
  StopWithSigterm();
}

// Past --restarts within a minute the keeper lets the connection go: clients get ENOTCONN within a
// second, none stays blocked, and the keeper says why and exits 1.
TEST_F(RingfusedSupervise, TheKeeperGivesUpAfterItsLimitAndClientsGetEnotconn) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  StartSupervised({"--transport=threads", source_, mountpoint_}, {"--restarts=1"});
  ASSERT_GT(KillDaemonAndAwaitTheNext(), 0);
  ASSERT_EQ(::kill(DaemonPid(), SIGKILL), 0);
  const int status = WaitBounded(daemon_pid_, std::chrono::seconds(5));
  daemon_pid_ = -1;
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  auto failed = std::async(std::launch::async, [path = mountpoint_ + "/before"] {
    struct stat attr {};
    return ::stat(path.c_str(), &attr) == 0 ? 0 : errno;
  });
  ASSERT_EQ(failed.wait_for(std::chrono::seconds(1)), std::future_status::ready);
  EXPECT_EQ(failed.get(), ENOTCONN);
  EXPECT_THAT(ReadFile(log_), HasSubstr("giving up after 1 restarts within 60 s"));
}

// A stop asked for while the keeper starts the next daemon waits until that one serves, which
// then unmounts: a SIGTERM passed on at once would kill it before it set up its handlers, and
// leave the mount dead.
TEST_F(RingfusedSupervise, AStopAskedForWhileTheDaemonRestartsUnmountsCleanly) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  StartSupervised({"--transport=threads", source_, mountpoint_});
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const pid_t dead = DaemonPid();
    ASSERT_EQ(::kill(dead, SIGKILL), 0);
    const auto deadline = Clock::now() + kRecoveryBound;
    while ((DaemonPid() <= 0 || DaemonPid() == dead) && Clock::now() < deadline) {
      std::this_thread::yield();
    }
    if (round < 2) {
      ASSERT_TRUE(AnswersWithin(kRecoveryBound));
      continue;
    }
    StopWithSigterm();  // the new daemon is starting now
  }
}

// ringfuse-ctl restart of a kept daemon says how to restart it instead, and the daemon serves on.
TEST_F(RingfusedSupervise, RestartOfAKeptDaemonIsRefusedAndItServesOn) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  StartSupervised({"--transport=threads", source_, mountpoint_});
  const pid_t serving = DaemonPid();
  const Outcome restarted = RunCommand({RINGFUSE_CTL_BINARY, "restart", mountpoint_});
  EXPECT_EQ(restarted.exit_code, 1) << restarted.output;
  EXPECT_THAT(restarted.output, HasSubstr("the running ringfused serves on"));
  EXPECT_THAT(restarted.output, HasSubstr("kept by ringfuse-ctl supervise"));
  EXPECT_EQ(DaemonPid(), serving);
  ExpectServes("after-the-refusal");
  StopWithSigterm();
}

// What a kept session cannot survive is refused before anything is mounted, saying why.
TEST_F(RingfusedSupervise, WhatCannotBeKeptIsRefusedAndNothingIsMounted) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  for (const std::vector<std::string>& refused : {std::vector<std::string>{"--transport=uring-cmd"},
                                                  std::vector<std::string>{"-o", "auto_unmount"}}) {
    SCOPED_TRACE(refused.back());
    std::vector<std::string> command = {RINGFUSE_CTL_BINARY, "supervise", "--", RINGFUSED_BINARY};
    command.insert(command.end(), refused.begin(), refused.end());
    command.insert(command.end(), {source_, mountpoint_});
    const Outcome outcome = RunCommand(command);
    EXPECT_EQ(outcome.exit_code, 1) << outcome.output;
    EXPECT_THAT(outcome.output, HasSubstr("cannot be kept"));
    EXPECT_THAT(outcome.output, HasSubstr("before it served a mount: nothing to keep"));
    EXPECT_FALSE(IsMounted(mountpoint_));
  }
}

// A user's own kept daemon, mounted through fusermount3: started again after a kill, as that
// user, on the same mount, which stays the user's.
TEST_F(RingfusedSupervise, AUsersKeptDaemonMountedThroughFusermountComesBack) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const ringfuse::testing::DevFuseModeGuard open_to_users(0666);
  ASSERT_TRUE(open_to_users.changed());
  const User user = kNobody;
  const UserHome home = PrepareHome();
  WriteFile(home.source + "/before", "in the source\n");
  const std::string ctl = home.home + "/ringfuse-ctl";
  std::filesystem::copy_file(RINGFUSE_CTL_BINARY, ctl);
  ASSERT_NO_FATAL_FAILURE(GiveHomeTo(home, user));
  mountpoint_ = home.mountpoint;  // TearDown unmounts it, whatever happens
  StartSupervised({"--transport=threads", home.source, home.mountpoint}, {},
                  {.user = user, .binary = home.binary}, ctl);
  const auto reads = [&] {
    return As(user,
              [&] { return ReadFile(home.mountpoint + "/before") == "in the source\n" ? 0 : -1; });
  };
  ASSERT_EQ(reads(), 0);
  const pid_t first = DaemonPid();
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  // The keeper's only child is the next daemon once the mount serves again: before, the child
  // read may be one that comes and goes while the keeper starts it (CI once read a pid, then
  // none, in two reads in a row).
  const auto deadline = Clock::now() + kRecoveryBound;
  int served = -1;
  while ((served = reads()) != 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(served, 0) << ReadFile(log_);
  const pid_t next = DaemonPid();
  ASSERT_GT(next, 0);
  ASSERT_NE(next, first);
  struct stat process {};
  ASSERT_EQ(::stat(("/proc/" + std::to_string(next)).c_str(), &process), 0);
  EXPECT_EQ(process.st_uid, user.uid) << "the daemon started again is not the user's";
  EXPECT_TRUE(IsMounted(home.mountpoint));
  StopWithSigterm();
}

}  // namespace
}  // namespace ringfuse::daemon
