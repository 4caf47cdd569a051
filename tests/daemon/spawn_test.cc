// SpawnWithSocket and SpawnOpenedWithSocket: the program started gets its copy of the socket,
// and nothing else started from another thread meanwhile does; the opened program is the file
// opened, whatever its path names by the time it starts.
#include "daemon/handover/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "daemon/handover/trusted_program.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

// A shell that exits 0 if the fd named by its last argument ("--fd=N") is open in it, else 3.
const Program kFdChecker{
    "/bin/sh", {"sh", "-c", "fd=${1#--fd=}; [ -e /proc/self/fd/$fd ] && exit 0; exit 3", "sh"}, ""};

base::UniqueFd OpenPath(const char* path) {
  return base::UniqueFd(::open(path, O_PATH | O_CLOEXEC));
}

int ExitCodeOf(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(SpawnWithSocket, TheProgramGetsItsCopyOfTheSocket) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  const base::UniqueFd ours(pair[0]), theirs(pair[1]);
  absl::StatusOr<pid_t> pid = SpawnWithSocket(kFdChecker, "--fd=", theirs.get(), false);
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_EQ(ExitCodeOf(*pid), 0) << "the socket's copy was not open in the program";
}

// Starts `program` with a copy of `socket` after "<fd_option>", one way or the other.
using Spawner = std::function<absl::StatusOr<pid_t>(const Program& program,
                                                    std::string_view fd_option, int socket)>;

// Programs other threads start while a socket is handed on must not inherit its copy: a
// successor daemon's peer that held a copy would never see the socket end. Each shell here is
// handed a socket of its own and counts the sockets it holds: one. The number of shells that
// held more.
int ShellsHoldingAnotherThreadsCopy(const Spawner& spawn) {
  int pair[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  const base::UniqueFd ours(pair[0]), theirs(pair[1]);
  std::atomic<bool> done{false};
  std::thread handing([&] {
    while (!done.load()) {
      absl::StatusOr<pid_t> pid = spawn(kFdChecker, "--fd=", theirs.get());
      if (pid.ok()) ExitCodeOf(*pid);
    }
  });
  const Program counter{
      "/bin/sh",
      {"sh", "-c",
       "[ $(ls -l /proc/$$/fd 2>/dev/null | grep -c socket:) = 1 ] 2>/dev/null && exit 0; exit 4"},
      ""};
  int leaked = 0;
  for (int i = 0; i < 300; ++i) {
    absl::StatusOr<pid_t> pid = spawn(counter, "--unused=", ours.get());
    EXPECT_TRUE(pid.ok()) << pid.status();
    if (pid.ok() && ExitCodeOf(*pid) == 4) ++leaked;
  }
  done = true;
  handing.join();
  return leaked;
}

TEST(SpawnWithSocket, ProgramsOtherThreadsStartMeanwhileDoNotInheritTheCopy) {
  EXPECT_EQ(ShellsHoldingAnotherThreadsCopy(
                [](const Program& program, std::string_view option, int socket) {
                  return SpawnWithSocket(program, option, socket, false);
                }),
            0)
      << "shells started from this thread held another thread's socket copy";
}

// As SpawnWithSocket: the socket's copy open, the directory asked for, a session of its own, and
// no signal blocked or ignored though this thread blocks one and this process ignores another.
TEST(SpawnOpenedWithSocket, StartsLikeSpawnWithSocket) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  const base::UniqueFd ours(pair[0]), theirs(pair[1]);
  const base::UniqueFd shell = OpenPath("/bin/sh");
  ASSERT_TRUE(shell.valid()) << std::strerror(errno);
  const Program checker{
      "/bin/sh",
      // The signals first, read by the shell itself: dash blocks every signal while it waits
      // for a child, so a child reading the shell's status (grep) sees them blocked now and then.
      {"sh", "-c",
       "while read -r key value; do case $key in "
       "SigBlk:) case $value in *[!0]*) exit 6;; esac;; "
       "SigIgn:) case $value in *[!0]*) exit 7;; esac;; esac; done < /proc/$$/status; "
       "fd=${1#--fd=}; [ -e /proc/self/fd/$fd ] || exit 3; [ \"$(pwd)\" = /proc ] || exit 4; "
       "[ \"$(cut -d' ' -f6 /proc/$$/stat)\" = $$ ] || exit 5; exit 0",
       "sh"},
      "/proc"};
  sigset_t usr1, before;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &usr1, &before), 0);
  const auto ignored = ::signal(SIGUSR2, SIG_IGN);
  absl::StatusOr<pid_t> pid =
      SpawnOpenedWithSocket(shell.get(), checker, "--fd=", theirs.get(), /*new_session=*/true);
  ::signal(SIGUSR2, ignored);
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_EQ(ExitCodeOf(*pid), 0) << "3: no socket copy, 4: elsewhere, 5: no session of its own, "
                                    "6: a signal blocked, 7: a signal ignored";
}

// What runs is the file OpenTrustedProgram checked and opened: a program renamed over its path
// afterwards does not run, though it is what the path names (the negative control).
TEST(SpawnOpenedWithSocket, StartsTheFileCheckedNotWhatItsPathNamesLater) {
  const ringfuse::testing::TempDir dir("ringfuse-spawn", "/run");  // /tmp would be refused
  ASSERT_FALSE(dir.path().empty()) << "mkdtemp in /run: " << std::strerror(errno);
  const std::string program = dir.path() + "/ringfused";
  std::filesystem::copy_file("/bin/true", program);
  const absl::StatusOr<base::UniqueFd> checked = OpenTrustedProgram(program);
  ASSERT_TRUE(checked.ok()) << checked.status();
  std::filesystem::copy_file("/bin/false", dir.path() + "/replacement");
  ASSERT_EQ(::rename((dir.path() + "/replacement").c_str(), program.c_str()), 0);
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  const base::UniqueFd ours(pair[0]), theirs(pair[1]);
  const Program successor{program, {"ringfused"}, ""};
  absl::StatusOr<pid_t> opened =
      SpawnOpenedWithSocket(checked->get(), successor, "--fd=", theirs.get(), false);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(ExitCodeOf(*opened), 0) << "the file at the path ran, not the one checked";
  absl::StatusOr<pid_t> by_path = SpawnWithSocket(successor, "--fd=", theirs.get(), false);
  ASSERT_TRUE(by_path.ok()) << by_path.status();
  EXPECT_EQ(ExitCodeOf(*by_path), 1) << "the rename did not replace the program";
}

TEST(SpawnOpenedWithSocket, SaysWhyTheProgramCouldNotStart) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  const base::UniqueFd ours(pair[0]), theirs(pair[1]);
  const base::UniqueFd not_executable = OpenPath("/etc/passwd");
  ASSERT_TRUE(not_executable.valid());
  absl::StatusOr<pid_t> refused = SpawnOpenedWithSocket(
      not_executable.get(), {"/etc/passwd", {"passwd"}, ""}, "--fd=", theirs.get(), false);
  EXPECT_EQ(refused.status().message(), "starting /etc/passwd: Permission denied");
  const base::UniqueFd shell = OpenPath("/bin/sh");
  absl::StatusOr<pid_t> nowhere = SpawnOpenedWithSocket(shell.get(), {"/bin/sh", {"sh"}, "/absent"},
                                                        "--fd=", theirs.get(), false);
  EXPECT_EQ(nowhere.status().message(), "starting /bin/sh in /absent: No such file or directory");
}

TEST(SpawnOpenedWithSocket, ProgramsOtherThreadsStartMeanwhileDoNotInheritTheCopy) {
  const base::UniqueFd shell = OpenPath("/bin/sh");
  ASSERT_TRUE(shell.valid());
  EXPECT_EQ(ShellsHoldingAnotherThreadsCopy(
                [&](const Program& program, std::string_view option, int socket) {
                  return SpawnOpenedWithSocket(shell.get(), program, option, socket, false);
                }),
            0)
      << "shells started from this thread held another thread's socket copy";
}

}  // namespace
}  // namespace ringfuse::daemon
