// ringfuse-ctl restart as a user runs it: a new ringfused takes the live mount over from the
// running one, which exits 0 without unmounting. Under client load no call fails, nothing is
// lost, open files and locks stay; a successor killed at any step of its takeover leaves the old
// daemon serving.
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "base/fd.h"
#include "daemon/control/control_socket.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/client_load.h"
#include "tests/daemon/ringfused_fixture.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::daemon {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The number after `marker` in a command's output; -1 if there is none.
pid_t PidAfter(const std::string& output, const std::string& marker) {
  const size_t at = output.find(marker);
  pid_t pid = -1;
  if (at != std::string::npos) std::istringstream(output.substr(at + marker.size())) >> pid;
  return pid;
}

// ringfuse-ctl restart: a new daemon serves the mount and the old one exits, without unmounting.
class RingfusedRestart : public RingfusedBinary {
 protected:
  void SetUp() override {
    RingfusedBinary::SetUp();
    source_ = dir_.path() + "/source";
    std::filesystem::create_directory(source_);
    WriteFile(source_ + "/before", "in the source\n");
  }

  // The pid `ringfuse-ctl status` names, or -1 with the output in the failure.
  pid_t StatusPid(const std::string& expected_service) {
    const Outcome status = RunCommand({RINGFUSE_CTL_BINARY, "status", mountpoint_});
    EXPECT_EQ(status.exit_code, 0) << status.output;
    EXPECT_THAT(status.output, HasSubstr(expected_service));
    return PidAfter(status.output, "(pid ");
  }

  // Restarts through ringfuse-ctl; returns the new daemon's pid, which TearDown then kills.
  pid_t Restart() {
    const Outcome restarted = RunCommand({RINGFUSE_CTL_BINARY, "restart", mountpoint_});
    EXPECT_EQ(restarted.exit_code, 0) << restarted.output;
    EXPECT_THAT(restarted.output, HasSubstr("restarted " + mountpoint_ + ": new ringfused pid "));
    EXPECT_THAT(restarted.output, ::testing::ContainsRegex("clients paused [0-9.]+ ms"));
    const pid_t pid = PidAfter(restarted.output, "new ringfused pid ");
    if (pid > 0) daemon_pid_ = pid;
    return pid;
  }

  // That the mount serves fresh lookups, reads and creates, through whichever daemon.
  void ExpectServes(const std::string& created) {
    struct stat st {};
    EXPECT_EQ(::stat((mountpoint_ + "/before").c_str(), &st), 0) << std::strerror(errno);
    EXPECT_EQ(ReadFile(mountpoint_ + "/before"), "in the source\n");
    WriteFile(mountpoint_ + "/" + created, "made through the mount\n");
    EXPECT_EQ(ReadFile(source_ + "/" + created), "made through the mount\n");
  }

  void StopWithSigterm(pid_t pid) {
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    EXPECT_TRUE(WaitUntilUnmounted(std::chrono::seconds(5)));
    EXPECT_TRUE(WaitUntilGone(pid, std::chrono::seconds(5)));
    daemon_pid_ = -1;
  }

  std::string source_;
  // Where a restart may start a program from: not /tmp, where dir_ is, which everyone may write.
  TempDir trusted_{"ringfused-restart", "/run"};
};

// The same on each transport: GetParam() is the --transport value.
class RingfusedRestartOn : public RingfusedRestart,
                           public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    RingfusedRestart::SetUp();
    if (std::string(GetParam()) == "uring-cmd") {
      uring_.emplace();  // before the daemon, whose INIT reads it
      if (!uring_->ok()) GTEST_SKIP() << uring_->reason();
    }
  }
  std::string TransportFlag() const { return std::string("--transport=") + GetParam(); }

  std::optional<ringfuse::testing::UringEnabled> uring_;  // goes after TearDown's unmount
};

// A detached daemon restarted twice (the second time by the daemon the first restart started):
// each time the old one exits, the mount stays, and the new one serves and answers ringfuse-ctl.
// A file opened for writing before the restarts, and its flock lock, stay usable and held.
TEST_P(RingfusedRestartOn, APassthroughDaemonHandsItsMountToANewOneThatServesOn) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const Outcome started = RunCommand({RINGFUSED_BINARY, TransportFlag(), source_, mountpoint_});
  ASSERT_EQ(started.exit_code, 0) << started.output;
  pid_t old_pid = daemon_pid_ = StatusPid("serves passthrough: ");
  ASSERT_GT(old_pid, 0);
  WriteFile(mountpoint_ + "/written", "before the restart\n");
  const base::UniqueFd held(::open((mountpoint_ + "/held").c_str(), O_CREAT | O_RDWR, 0644));
  ASSERT_TRUE(held.valid()) << std::strerror(errno);
  ASSERT_EQ(::flock(held.get(), LOCK_EX), 0);
  for (int restart = 1; restart <= 2; ++restart) {
    SCOPED_TRACE("restart " + std::to_string(restart));
    const pid_t new_pid = Restart();
    ASSERT_GT(new_pid, 0);
    EXPECT_NE(new_pid, old_pid);
    EXPECT_TRUE(WaitUntilGone(old_pid, std::chrono::seconds(10))) << "the old daemon stayed";
    EXPECT_TRUE(IsMounted(mountpoint_)) << "the restart unmounted";
    EXPECT_EQ(::kill(new_pid, 0), 0) << "the new daemon is gone";
    EXPECT_EQ(ReadFile(mountpoint_ + "/written"), "before the restart\n");
    const std::string line =
        "written through the held fd after restart " + std::to_string(restart) + "\n";
    EXPECT_EQ(::write(held.get(), line.data(), line.size()), static_cast<ssize_t>(line.size()))
        << std::strerror(errno);
    EXPECT_EQ(::fsync(held.get()), 0) << std::strerror(errno);
    const base::UniqueFd other(::open((mountpoint_ + "/held").c_str(), O_RDONLY));
    EXPECT_EQ(::flock(other.get(), LOCK_EX | LOCK_NB), -1) << "the lock was lost";
    ExpectServes("after-" + std::to_string(restart));
    EXPECT_EQ(StatusPid("serves passthrough: "), new_pid);
    old_pid = new_pid;
  }
  EXPECT_EQ(ReadFile(source_ + "/held"),
            "written through the held fd after restart 1\nwritten through the held fd after "
            "restart 2\n");
  StopWithSigterm(old_pid);
}

// In revisions mode the new daemon serves the revision the old one served and publishes; the
// old one, this test's child, exits 0 and says where the mount went.
TEST_P(RingfusedRestartOn, ARevisionsDaemonRestartsAndTheNewOnePublishes) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const std::string log = dir_.path() + "/stderr";
  StartInForeground({"-f", TransportFlag(), "--revisions", repo_, mountpoint_, "--revision=r1"},
                    log);
  const pid_t old_pid = daemon_pid_;
  EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "one\n");
  const pid_t new_pid = Restart();
  ASSERT_GT(new_pid, 0);
  const int status = WaitBounded(old_pid, std::chrono::seconds(10));
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // The new daemon says so once serving, which may come after its first answers.
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (ReadFile(log).find("took over " + mountpoint_) == std::string::npos &&
         Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::string said = ReadFile(log);
  EXPECT_THAT(said, HasSubstr(mountpoint_ + " is served by pid " + std::to_string(new_pid) +
                              " now (ringfuse-ctl restart); exiting"));
  EXPECT_THAT(said, HasSubstr("took over " + mountpoint_));
  EXPECT_THAT(said, Not(HasSubstr("abort"))) << said;
  EXPECT_THAT(said, Not(HasSubstr("cannot"))) << said;
  EXPECT_TRUE(IsMounted(mountpoint_));
  EXPECT_EQ(StatusPid("serves revision r1: "), new_pid);
  EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "one\n");

  // Invalidated name by name, from the names the old daemon tracked: the one read above, cached
  // for a day, must show r2 (epoch would invalidate everything, tracked or not).
  const Outcome published =
      RunCommand({RINGFUSE_CTL_BINARY, "publish", mountpoint_, "r2", "--invalidate=entries"});
  ASSERT_EQ(published.exit_code, 0) << published.output;
  EXPECT_THAT(published.output, HasSubstr("published r2"));
  EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "two, longer\n");
  EXPECT_EQ(ReadFile(mountpoint_ + "/sub/same"), "shared\n");
  EXPECT_EQ(StatusPid("serves revision r2: "), new_pid);
  StopWithSigterm(new_pid);
}

// A successor that cannot take over, or cannot start: the restart says why, and the daemon that
// was serving serves on, the same process.
TEST_F(RingfusedRestart, ARestartThatFailsLeavesTheOldDaemonServing) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  StartInForeground({"-f", "--transport=threads", source_, mountpoint_}, dir_.path() + "/stderr");
  const pid_t pid = daemon_pid_;

  const Outcome refused =
      RunCommand({RINGFUSE_CTL_BINARY, "restart", mountpoint_, "--binary", "/bin/false"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.output,
              HasSubstr("restart of " + mountpoint_ + " failed, the running ringfused serves on"));
  EXPECT_THAT(refused.output, HasSubstr("exited with status 1")) << refused.output;
  const pid_t killed = PidAfter(refused.output, ", pid ");
  ASSERT_GT(killed, 0) << refused.output;
  EXPECT_FALSE(std::filesystem::exists("/proc/" + std::to_string(killed)))
      << "the failed successor was not reaped";

  ASSERT_FALSE(trusted_.path().empty()) << "mkdtemp in /run: " << std::strerror(errno);
  const std::string absent = trusted_.path() + "/absent";
  const Outcome missing =
      RunCommand({RINGFUSE_CTL_BINARY, "restart", mountpoint_, "--binary=" + absent});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.output, HasSubstr("--binary " + absent + ": No such file or directory"));
  // The same asked of the daemon directly, as a program removed after ringfuse-ctl looked.
  absl::StatusOr<std::string> reply =
      SendControlRequest(mountpoint_, "restart " + absent, absl::Seconds(20));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_THAT(*reply, HasSubstr("error starting " + absent));
  EXPECT_THAT(*reply, HasSubstr("No such file or directory"));

  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), 0) << "the daemon ended";
  EXPECT_EQ(StatusPid("serves passthrough: "), pid);
  EXPECT_TRUE(IsMounted(mountpoint_));
  ExpectServes("after-refusals");
}

// A program that someone else could replace, or a directory on its path, is refused before it
// starts, with the path at fault, and the daemon serves on; the same program where only root
// writes starts (the negative control).
TEST_F(RingfusedRestart, AProgramOthersCouldReplaceIsRefusedAndTheDaemonServesOn) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  ASSERT_FALSE(trusted_.path().empty()) << "mkdtemp in /run: " << std::strerror(errno);
  const std::string open = trusted_.path() + "/open";
  std::filesystem::create_directory(open);
  std::filesystem::copy_file(RINGFUSED_BINARY, open + "/ringfused");
  ASSERT_EQ(::chmod(open.c_str(), 0777), 0);
  StartInForeground({"-f", "--transport=threads", source_, mountpoint_}, dir_.path() + "/stderr");
  const pid_t pid = daemon_pid_;

  const Outcome refused =
      RunCommand({RINGFUSE_CTL_BINARY, "restart", mountpoint_, "--binary=" + open + "/ringfused"});
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_THAT(refused.output,
              HasSubstr("restart of " + mountpoint_ + " failed, the running ringfused serves on: " +
                        "will not run " + open + "/ringfused: " + open +
                        " is writable by everyone; a root daemon runs no program that anyone "
                        "else could replace"));
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), 0) << "the daemon ended";
  EXPECT_EQ(StatusPid("serves passthrough: "), pid);
  ExpectServes("after-refusal");

  ASSERT_EQ(::chmod(open.c_str(), 0755), 0);
  const Outcome restarted =
      RunCommand({RINGFUSE_CTL_BINARY, "restart", mountpoint_, "--binary=" + open + "/ringfused"});
  ASSERT_EQ(restarted.exit_code, 0) << restarted.output;
  const pid_t new_pid = daemon_pid_ = PidAfter(restarted.output, "new ringfused pid ");
  ASSERT_GT(new_pid, 0) << restarted.output;
  const int status = WaitBounded(pid, std::chrono::seconds(10));
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(StatusPid("serves passthrough: "), new_pid);
  ExpectServes("after-restart");
  StopWithSigterm(new_pid);
}

// A user's own daemon, mounted through fusermount3: ringfuse-ctl finds it through the user's
// runtime directory, its successor is that user's too, and the mount stays the user's.
TEST_P(RingfusedRestartOn, AUsersDaemonMountedThroughFusermountRestarts) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const ringfuse::testing::DevFuseModeGuard open_to_users(0666);
  ASSERT_TRUE(open_to_users.changed());
  const User user = kNobody;
  // As PrepareHome, but not under /tmp, from where the daemon would refuse to start its successor.
  ASSERT_FALSE(trusted_.path().empty()) << "mkdtemp in /run: " << std::strerror(errno);
  ASSERT_EQ(::chmod(trusted_.path().c_str(), 0755), 0);
  const std::string base = trusted_.path() + "/home";
  const UserHome home{base, base + "/ringfused", base + "/src", base + "/mnt"};
  std::filesystem::create_directories(home.source);
  std::filesystem::create_directory(home.mountpoint);
  std::filesystem::copy_file(RINGFUSED_BINARY, home.binary);
  WriteFile(home.source + "/before", "in the source\n");
  const std::string runtime = home.home + "/run";
  std::filesystem::create_directory(runtime);
  // Run as the user, who alone may look at the mount (root may not without allow_other).
  const std::string ctl = home.home + "/ringfuse-ctl";
  std::filesystem::copy_file(RINGFUSE_CTL_BINARY, ctl);
  ASSERT_NO_FATAL_FAILURE(GiveHomeTo(home, user));
  ASSERT_EQ(::chmod(runtime.c_str(), 0700), 0);
  // For the daemon, which inherits it, and for ringfuse-ctl run by this test.
  struct RuntimeDir {
    explicit RuntimeDir(const std::string& path) { ::setenv("XDG_RUNTIME_DIR", path.c_str(), 1); }
    ~RuntimeDir() { ::unsetenv("XDG_RUNTIME_DIR"); }
  } runtime_dir(runtime);
  mountpoint_ = home.mountpoint;  // TearDown unmounts it, whatever happens
  StartInForeground({"-f", TransportFlag(), home.source, home.mountpoint}, dir_.path() + "/stderr",
                    {.user = user, .binary = home.binary});
  const pid_t old_pid = daemon_pid_;
  const auto reads_before = [&] {
    return As(user,
              [&] { return ReadFile(home.mountpoint + "/before") == "in the source\n" ? 0 : -1; });
  };
  ASSERT_EQ(reads_before(), 0);
  const std::string uid = std::to_string(user.uid), gid = std::to_string(user.gid);
  const Outcome restarted = RunCommand({"/usr/bin/setpriv", "--reuid=" + uid, "--regid=" + gid,
                                        "--clear-groups", ctl, "restart", home.mountpoint});
  ASSERT_EQ(restarted.exit_code, 0) << restarted.output;
  const pid_t new_pid = PidAfter(restarted.output, "new ringfused pid ");
  ASSERT_GT(new_pid, 0) << restarted.output;
  daemon_pid_ = new_pid;
  const int status = WaitBounded(old_pid, std::chrono::seconds(10));
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  struct stat process {};
  ASSERT_EQ(::stat(("/proc/" + std::to_string(new_pid)).c_str(), &process), 0);
  EXPECT_EQ(process.st_uid, user.uid) << "the successor is not the user's";
  EXPECT_TRUE(IsMounted(home.mountpoint));
  EXPECT_EQ(reads_before(), 0);
  EXPECT_EQ(As(user,
               [&] {
                 const base::UniqueFd made(::open((home.mountpoint + "/after").c_str(),
                                                  O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
                 return made.valid() ? 0 : -1;
               }),
            0);
  ASSERT_EQ(::kill(new_pid, SIGTERM), 0);
  EXPECT_TRUE(WaitUntilUnmounted(std::chrono::seconds(5)));
  EXPECT_TRUE(WaitUntilGone(new_pid, std::chrono::seconds(5)));
  daemon_pid_ = -1;
}

// Without a successor, a daemon killed with SIGKILL (no -o auto_unmount) leaves the mount in
// place but dead: clients working on it get ENOTCONN within a second, and none stays blocked.
TEST_F(RingfusedRestart, ClientsOfAKilledDaemonGetEnotconnWithinASecond) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  MixedLoad::Prepare(source_);
  StartInForeground({"-f", "--transport=threads", source_, mountpoint_}, dir_.path() + "/stderr");
  std::atomic<bool> stop{false};
  std::atomic<int> disconnected{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&] {
      while (!stop) {
        // A missing name: never cached (no negative timeout), so each stat asks the daemon.
        struct stat attr;
        if (::stat((mountpoint_ + "/tree/missing").c_str(), &attr) != 0 && errno == ENOTCONN) {
          ++disconnected;
          return;
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(::kill(daemon_pid_, SIGKILL), 0);
  ::waitpid(daemon_pid_, nullptr, 0);
  daemon_pid_ = -1;
  const auto deadline = Clock::now() + std::chrono::seconds(1);
  while (disconnected < 4 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop = true;
  EXPECT_EQ(disconnected, 4) << "clients still blocked a second after the daemon died";
  std::printf("clients got ENOTCONN %ld ms after the daemon was killed\n",
              static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    Clock::now() - (deadline - std::chrono::seconds(1)))
                                    .count()));
  for (std::thread& client : clients) client.join();
  EXPECT_TRUE(IsMounted(mountpoint_));  // TearDown detaches it
}

// Twenty restarts while clients stat, list, read, readlink, create, unlink and append with
// fsync: no call fails, no ESTALE, nothing made twice, every fsync'ed byte there, and no daemon
// holds more fds than the first did.
TEST_P(RingfusedRestartOn, TwentyRestartsUnderLoadFailNoCallAndLoseNoByte) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  MixedLoad::Prepare(source_);
  const Outcome started = RunCommand({RINGFUSED_BINARY, TransportFlag(), source_, mountpoint_});
  ASSERT_EQ(started.exit_code, 0) << started.output;
  pid_t pid = daemon_pid_ = StatusPid("serves passthrough: ");
  constexpr int kClients = 4;
  MixedLoad load(mountpoint_, kClients);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const size_t first_fds = ringfuse::testing::OpenFdCount(pid);
  size_t most_fds = first_fds;
  for (int restart = 1; restart <= 20; ++restart) {
    const pid_t next = Restart();
    ASSERT_GT(next, 0) << "restart " << restart;
    ASSERT_TRUE(WaitUntilGone(pid, std::chrono::seconds(10))) << "restart " << restart;
    pid = next;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    most_fds = std::max(most_fds, ringfuse::testing::OpenFdCount(pid));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  load.Finish();
  EXPECT_EQ(load.failures(), 0) << load.first_failure();
  EXPECT_EQ(load.estale(), 0);
  EXPECT_GT(load.calls(), 0);
  for (int t = 0; t < kClients; ++t) {
    EXPECT_EQ(ReadFile(source_ + "/c" + std::to_string(t) + ".log"), load.logged()[t]) << t;
  }
  // Nothing made twice, nothing left behind: the tree, the logs and the fixture's file.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(source_),
                          std::filesystem::directory_iterator()),
            kClients + 2);
  // The clients' open logs and names come with each handover, and nothing more accumulates.
  EXPECT_LE(most_fds, first_fds + 2) << "first daemon " << first_fds << " fds";
  EXPECT_TRUE(IsMounted(mountpoint_));
  StopWithSigterm(pid);
}

// The successors's pid: the child of `parent` stopped by RINGFUSED_TEST_STOP_AT, within 10 s.
pid_t StoppedChildOf(pid_t parent) {
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      std::ifstream stat(entry.path() / "stat");
      std::string pid, command, state;
      pid_t ppid = 0;
      if (stat >> pid >> command >> state >> ppid && ppid == parent && state == "T") {
        return std::stoi(pid);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

// A successor killed at each step of its takeover: before it is ready (the old daemon has not
// paused), with the state received, and restored but not yet acknowledged (the old daemon has
// paused and its requests may have been read by the successor). Each time the restart fails,
// the old daemon serves on, and the clients working meanwhile see nothing fail.
TEST_P(RingfusedRestartOn, ASuccessorKilledAtEachStepLeavesTheOldDaemonServing) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  MixedLoad::Prepare(source_);
  for (const char* step : {"starting", "received", "restored"}) {
    SCOPED_TRACE(step);
    ASSERT_EQ(::setenv("RINGFUSED_TEST_STOP_AT", step, 1), 0);
    StartInForeground({"-f", TransportFlag(), source_, mountpoint_},
                      dir_.path() + "/stderr-" + step, {.binary = RINGFUSED_HOOKED_BINARY});
    ::unsetenv("RINGFUSED_TEST_STOP_AT");
    const pid_t old_pid = daemon_pid_;
    MixedLoad load(mountpoint_, 2);
    std::future<Outcome> restart = std::async(std::launch::async, [this] {
      return RunCommand({RINGFUSE_CTL_BINARY, "restart", mountpoint_});
    });
    const pid_t successor = StoppedChildOf(old_pid);
    ASSERT_GT(successor, 0) << "no successor stopped at " << step;
    ASSERT_EQ(::kill(successor, SIGKILL), 0);
    const Outcome failed = restart.get();
    EXPECT_EQ(failed.exit_code, 1) << failed.output;
    EXPECT_THAT(failed.output, HasSubstr("the running ringfused serves on")) << failed.output;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    load.Finish();
    EXPECT_EQ(load.failures(), 0) << load.first_failure();
    EXPECT_EQ(::waitpid(old_pid, nullptr, WNOHANG), 0) << "the old daemon ended";
    EXPECT_EQ(StatusPid("serves passthrough: "), old_pid);
    ExpectServes(std::string("after-") + step);
    StopWithSigterm(old_pid);
    EXPECT_GE(WaitBounded(old_pid, std::chrono::seconds(5)), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(, RingfusedRestartOn, ::testing::Values("threads", "uring", "uring-cmd"),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           std::string name = param_info.param;
                           std::erase(name, '-');
                           return name;
                         });

}  // namespace
}  // namespace ringfuse::daemon
