// DaemonMeters: the figures of one workload divided by its client operations, and where the
// system call and contention meters cannot start, the reason in place of their figures (the CPU
// time still taken).
#include "tools/daemon_meters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>

#include "tools/compare_run.h"

namespace ringfuse::tools {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::StartsWith;

std::map<std::string, double> ByName(const std::vector<Metric>& metrics) {
  std::map<std::string, double> values;
  for (const Metric& metric : metrics) values[metric.name] = metric.value;
  return values;
}

TEST(DaemonMeters, FutexWakesAndSystemCallsAreCountedPerOperation) {
  if (::geteuid() != 0) GTEST_SKIP() << "perf counters of tracepoints need root";
  constexpr int kWakes = 1000;
  DaemonMeters meters(::getpid());
  ASSERT_THAT(meters.Uncounted(), IsEmpty()) << meters.Uncounted().front().why;
  uint32_t word = 0;
  for (int i = 0; i < kWakes; ++i) {
    ::syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  }
  meters.Stop();
  const std::map<std::string, double> per_op = ByName(meters.PerOperation(kWakes / 2));
  // Two wakes an operation, and no more than a few others of this process's threads.
  EXPECT_GE(per_op.at(kFutexWakesMetric), 2.0);
  EXPECT_LT(per_op.at(kFutexWakesMetric), 2.1);
  EXPECT_LT(per_op.at(kFutexWaitsMetric), 0.1);
  // Each wake is a system call, counted once (twice would be 4 an operation); the others are the
  // meters' own, started and read here: 61 of them under AddressSanitizer (2.12 an operation).
  EXPECT_GE(per_op.at(kSyscallsMetric), 2.0);
  EXPECT_LT(per_op.at(kSyscallsMetric), 2.5);
  EXPECT_GT(per_op.at(kCpuMetric), 0);
}

TEST(DaemonMeters, WithoutTheProcessSystemCallsAndContentionSayWhyAndCpuRemains) {
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ASSERT_GT(gone, 0);
  ::waitpid(gone, nullptr, 0);
  DaemonMeters meters(gone);
  meters.Stop();
  std::vector<std::string> uncounted;
  for (const DaemonMeters::UncountedMetric& metric : meters.Uncounted()) {
    uncounted.push_back(metric.metric);
    EXPECT_THAT(metric.why, StartsWith("n/a: ")) << metric.metric;
  }
  EXPECT_THAT(uncounted,
              ElementsAre(kSyscallsMetric, kFutexWaitsMetric, kFutexWakesMetric, kSwitchesMetric));
  std::vector<Metric> per_op = meters.PerOperation(10);
  ASSERT_EQ(per_op.size(), 1u);
  EXPECT_EQ(per_op[0].name, kCpuMetric);
}

}  // namespace
}  // namespace ringfuse::tools
