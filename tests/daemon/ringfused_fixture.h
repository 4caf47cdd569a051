// What the tests of ringfused and ringfuse-ctl as a user runs them share: running commands with
// a time bound, starting the daemon as a child (as root or another user, within an fd limit),
// and a fixture that leaves no daemon and no mount behind.
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/daemon/test_files.h"
#include "tests/daemon/test_users.h"
#include "tests/open_fds.h"

extern char** environ;

namespace ringfuse::daemon {

using Clock = std::chrono::steady_clock;
using ringfuse::testing::FileContains;
using ringfuse::testing::ReadFile;
using ringfuse::testing::TempDir;
using ringfuse::testing::WriteFile;

inline constexpr auto kCommandBound = std::chrono::seconds(20);

// Whether `pid` ended (or is a zombie nobody reaped: the detached daemon is not our child).
inline bool WaitUntilGone(pid_t pid, std::chrono::milliseconds bound) {
  const auto deadline = Clock::now() + bound;
  for (;;) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pid_field, command, state;
    if (!(stat >> pid_field >> command >> state) || state == "Z") return true;
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// waitpid with a time bound; kills the child past it. Returns the status, or -1 if killed.
inline int WaitBounded(pid_t pid, std::chrono::milliseconds bound) {
  const auto deadline = Clock::now() + bound;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status;
}

struct Outcome {
  int exit_code = -1;  // -1: killed at the time bound
  std::string output;  // standard output and error, interleaved
};

// Runs argv with its output captured; kills it at kCommandBound.
inline Outcome RunCommand(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  EXPECT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  Outcome outcome;
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    outcome.output = "spawn failed";
    return outcome;
  }
  // The detached daemon keeps no copy of the pipe (its streams go to /dev/null), so end of file
  // comes when the command itself is done.
  const auto deadline = Clock::now() + kCommandBound;
  char buffer[4096];
  for (;;) {
    const int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    pollfd readable{pipe_fds[0], POLLIN, 0};
    if (left <= 0 || ::poll(&readable, 1, left) <= 0) {
      ::kill(pid, SIGKILL);
      break;
    }
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof(buffer));
    if (n <= 0) break;
    outcome.output.append(buffer, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  const int status = WaitBounded(pid, std::chrono::seconds(5));
  outcome.exit_code = status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

inline bool IsMounted(const std::string& path) {
  std::ifstream mounts("/proc/self/mounts");
  std::string device, where;
  std::string rest;
  while (mounts >> device >> where && std::getline(mounts, rest)) {
    if (where == path) return true;
  }
  return false;
}

// fusermount3 wants the user's name: nobody has one everywhere.
inline const User kNobody{65534, 65534, {65534}};

// How a daemon is started: as whom, with which binary, within which fd limit.
struct Launch {
  std::optional<struct rlimit> fd_limit{};
  std::optional<User> user{};  // root if not given
  std::string binary = RINGFUSED_BINARY;
};

class RingfusedBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty()) << std::strerror(errno);
    repo_ = dir_.path() + "/repo";
    mountpoint_ = dir_.path() + "/mnt";
    std::filesystem::create_directories(repo_ + "/r1/sub");
    std::filesystem::create_directories(repo_ + "/r2/sub");
    std::filesystem::create_directory(mountpoint_);
    WriteFile(repo_ + "/r1/version", "one\n");
    WriteFile(repo_ + "/r2/version", "two, longer\n");
    WriteFile(repo_ + "/r1/sub/same", "shared\n");
    std::filesystem::create_hard_link(repo_ + "/r1/sub/same", repo_ + "/r2/sub/same");
  }

  // Whatever a test leaves, the daemon is stopped and the mount removed here, before dir_ goes
  // with the fixture.
  void TearDown() override {
    if (daemon_pid_ > 0) ::kill(daemon_pid_, SIGKILL);
    if (IsMounted(mountpoint_)) ::umount2(mountpoint_.c_str(), MNT_DETACH);
  }

  // Starts ringfused with `args` (the program name is added) as this test's child, in the
  // foreground, its standard error in `log`; waits until it has mounted.
  void StartInForeground(const std::vector<std::string>& args, const std::string& log,
                         const Launch& launch = {}) {
    daemon_pid_ = Spawn(args, log, launch);
    ASSERT_TRUE(WaitUntilMounted(std::chrono::seconds(10))) << ReadFile(log);
  }

  static pid_t Spawn(const std::vector<std::string>& args, const std::string& log,
                     const Launch& launch) {
    std::vector<const char*> argv{launch.binary.c_str()};
    for (const std::string& arg : args) argv.push_back(arg.c_str());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid != 0) return pid;
    if (launch.fd_limit && ::setrlimit(RLIMIT_NOFILE, &*launch.fd_limit) != 0) ::_exit(126);
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, STDERR_FILENO);
    if (launch.user && (::setgroups(0, nullptr) != 0 || ::setgid(launch.user->gid) != 0 ||
                        ::setuid(launch.user->uid) != 0)) {
      ::_exit(126);
    }
    ::execv(argv[0], const_cast<char* const*>(argv.data()));
    ::_exit(127);
  }

  // A user's own copies of the daemon, a SOURCE and a mountpoint: the build tree may lie where
  // other users cannot reach.
  struct UserHome {
    std::string home, binary, source, mountpoint;
  };
  UserHome PrepareHome() {
    const std::string home = dir_.path() + "/home";
    UserHome prepared{home, home + "/ringfused", home + "/src", home + "/mnt"};
    std::filesystem::create_directories(prepared.source);
    std::filesystem::create_directory(prepared.mountpoint);
    std::filesystem::copy_file(RINGFUSED_BINARY, prepared.binary);
    return prepared;
  }
  // Makes everything under the home `user`'s, once it holds what the test wants there.
  void GiveHomeTo(const UserHome& prepared, const User& user) {
    ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
    ASSERT_EQ(::chown(prepared.home.c_str(), user.uid, user.gid), 0);
    for (const auto& entry : std::filesystem::recursive_directory_iterator(prepared.home)) {
      ASSERT_EQ(::lchown(entry.path().c_str(), user.uid, user.gid), 0);
    }
  }

  bool WaitUntilUnmounted(std::chrono::milliseconds bound) { return WaitUntil(false, bound); }
  bool WaitUntilMounted(std::chrono::milliseconds bound) { return WaitUntil(true, bound); }

  bool WaitUntil(bool mounted, std::chrono::milliseconds bound) {
    const auto deadline = Clock::now() + bound;
    while (IsMounted(mountpoint_) != mounted) {
      if (Clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  TempDir dir_{"ringfused-binary"};
  std::string repo_, mountpoint_;
  pid_t daemon_pid_ = -1;
};

}  // namespace ringfuse::daemon
