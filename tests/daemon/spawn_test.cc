// SpawnWithSocket: the program started gets its copy of the socket, and nothing else started
// from another thread meanwhile does.
#include "daemon/spawn.h"

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "transport/fd.h"

namespace ringfuse::daemon {
namespace {

// A shell that exits 0 if the fd named by its last argument ("--fd=N") is open in it, else 3.
const Program kFdChecker{
    "/bin/sh", {"sh", "-c", "fd=${1#--fd=}; [ -e /proc/self/fd/$fd ] && exit 0; exit 3", "sh"}, ""};

int ExitCodeOf(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(SpawnWithSocket, TheProgramGetsItsCopyOfTheSocket) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  const internal::UniqueFd ours(pair[0]), theirs(pair[1]);
  absl::StatusOr<pid_t> pid = SpawnWithSocket(kFdChecker, "--fd=", theirs.get(), false);
  ASSERT_TRUE(pid.ok()) << pid.status();
  EXPECT_EQ(ExitCodeOf(*pid), 0) << "the socket's copy was not open in the program";
}

// Programs other threads start while a socket is handed on must not inherit its copy: a
// successor daemon's peer that held a copy would never see the socket end. Each shell here is
// handed a socket of its own and counts the sockets it holds: one.
TEST(SpawnWithSocket, ProgramsOtherThreadsStartMeanwhileDoNotInheritTheCopy) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  const internal::UniqueFd ours(pair[0]), theirs(pair[1]);
  std::atomic<bool> done{false};
  std::thread handing([&] {
    while (!done.load()) {
      absl::StatusOr<pid_t> pid = SpawnWithSocket(kFdChecker, "--fd=", theirs.get(), false);
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
    absl::StatusOr<pid_t> pid = SpawnWithSocket(counter, "--unused=", ours.get(), false);
    ASSERT_TRUE(pid.ok()) << pid.status();
    if (ExitCodeOf(*pid) == 4) ++leaked;
  }
  done = true;
  handing.join();
  EXPECT_EQ(leaked, 0) << "shells started from this thread held another thread's socket copy";
}

}  // namespace
}  // namespace ringfuse::daemon
