// DaemonMeters: the figures of one workload divided by its client operations, and where the
// contention meter cannot start, the reason in place of its figures (the CPU time still taken).
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
using ::testing::StartsWith;

std::map<std::string, double> ByName(const std::vector<Metric>& metrics) {
  std::map<std::string, double> values;
  for (const Metric& metric : metrics) values[metric.name] = metric.value;
  return values;
}

TEST(DaemonMeters, FutexWakesAreCountedPerOperation) {
  if (::geteuid() != 0) GTEST_SKIP() << "perf counters of the futex tracepoint need root";
  constexpr int kWakes = 1000;
  DaemonMeters meters(::getpid());
  ASSERT_TRUE(meters.Uncounted().empty()) << meters.WhyUncounted();
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
  EXPECT_GT(per_op.at(kCpuMetric), 0);
}

TEST(DaemonMeters, WithoutTheProcessContentionSaysWhyAndCpuRemains) {
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ASSERT_GT(gone, 0);
  ::waitpid(gone, nullptr, 0);
  DaemonMeters meters(gone);
  meters.Stop();
  EXPECT_THAT(meters.Uncounted(),
              ElementsAre(kFutexWaitsMetric, kFutexWakesMetric, kSwitchesMetric));
  EXPECT_THAT(meters.WhyUncounted(), StartsWith("n/a: "));
  std::vector<Metric> per_op = meters.PerOperation(10);
  ASSERT_EQ(per_op.size(), 1u);
  EXPECT_EQ(per_op[0].name, kCpuMetric);
}

}  // namespace
}  // namespace ringfuse::tools
