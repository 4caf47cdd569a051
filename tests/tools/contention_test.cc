// ContentionMeter: threads that wait for each other's lock show futex waits, wakes and voluntary
// switches; the same work without a shared lock shows none (the negative control that the
// counters do not count the work itself).
#include "tools/contention.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace ringfuse::tools {
namespace {

constexpr int kThreads = 4;
constexpr int kRounds = 20000;

// kThreads threads, started and parked, then released together into `work`; returns the counts
// of this process's threads over the work (the spinning main thread's among them).
template <typename Work>
ContentionCounts CountOver(Work work) {
  std::atomic<int> parked{0};
  std::atomic<bool> go{false};
  std::atomic<int> done{0};
  std::atomic<bool> read{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      ++parked;
      while (!go.load()) std::this_thread::yield();
      work();
      ++done;
      // Alive until read: the switches of a thread that ended are gone with its /proc entry.
      while (!read.load()) std::this_thread::yield();
    });
  }
  while (parked.load() < kThreads) std::this_thread::yield();
  absl::StatusOr<ContentionMeter> meter = ContentionMeter::Start(::getpid());
  EXPECT_TRUE(meter.ok()) << meter.status();
  go = true;
  // Read before the joins, which wait on a futex of their own.
  while (done.load() < kThreads) std::this_thread::yield();
  const ContentionCounts counts = meter.ok() ? meter->Read() : ContentionCounts{};
  read = true;
  for (std::thread& thread : threads) thread.join();
  return counts;
}

class ContentionMeterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "perf counters of the futex tracepoint need root";
  }
};

TEST_F(ContentionMeterTest, ThreadsSharingALockShowFutexWaitsAndWakes) {
  std::mutex shared;
  uint64_t total = 0;
  const ContentionCounts counts = CountOver([&] {
    for (int i = 0; i < kRounds; ++i) {
      std::lock_guard lock(shared);
      ++total;
      // Held across a switch now and then, so that the others must sleep on it.
      if (i % 64 == 0) std::this_thread::yield();
    }
  });
  EXPECT_EQ(total, uint64_t{kThreads} * kRounds);
  EXPECT_GT(counts.futex_waits, 10u);
  EXPECT_GT(counts.futex_wakes, 10u);
  EXPECT_GT(counts.voluntary_switches, 10u);
}

TEST_F(ContentionMeterTest, ThreadsWithLocksOfTheirOwnShowNone) {
  const ContentionCounts counts = CountOver([] {
    std::mutex own;
    uint64_t total = 0;
    for (int i = 0; i < kRounds; ++i) {
      std::lock_guard lock(own);
      ++total;
      if (i % 64 == 0) std::this_thread::yield();
    }
    EXPECT_EQ(total, uint64_t{kRounds});
  });
  EXPECT_EQ(counts.futex_calls(), 0u);
}

}  // namespace
}  // namespace ringfuse::tools
