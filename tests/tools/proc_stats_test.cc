// ProcessCpuMicros: another process's CPU time, all its threads counted, those that ended too
// (a daemon's workers come and go), and nothing for a process that is gone.
#include "tools/proc_stats.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <csignal>
#include <thread>

namespace ringfuse::tools {
namespace {

constexpr double kBurnMicros = 100'000;

double ThreadCpuMicros() {
  timespec used;
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used);
  return static_cast<double>(used.tv_sec) * 1e6 + static_cast<double>(used.tv_nsec) / 1e3;
}

// In the child: a thread burns kBurnMicros of CPU and ends; then the child says so and waits.
[[noreturn]] void BurnOnAThreadThenWait(int done_fd) {
  std::thread([] {
    while (ThreadCpuMicros() < kBurnMicros) {
    }
  }).join();
  const char done = 1;
  (void)::write(done_fd, &done, 1);
  for (;;) ::pause();
}

TEST(ProcessCpuMicros, CountsAThreadThatEnded) {
  int done[2];
  ASSERT_EQ(::pipe(done), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) BurnOnAThreadThenWait(done[1]);
  ::close(done[1]);
  char byte = 0;
  ASSERT_EQ(::read(done[0], &byte, 1), 1);
  ::close(done[0]);
  const double used = ProcessCpuMicros(child);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_GE(used, kBurnMicros);
  EXPECT_LT(used, 100 * kBurnMicros);
}

TEST(ProcessCpuMicros, IsZeroForAProcessThatIsGone) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(ProcessCpuMicros(child), 0);
}

}  // namespace
}  // namespace ringfuse::tools
