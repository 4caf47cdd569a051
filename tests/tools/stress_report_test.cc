// ringfuse-bench stress's report: medians over the rounds by thread count, the speed-up against
// the smallest thread count, contention per request, and n/a where the meter could not count.
#include "tools/stress_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ringfuse::tools {
namespace {

using ::testing::HasSubstr;

StressSample Sample(int threads, uint64_t requests, std::optional<ContentionCounts> counts) {
  return StressSample{threads, 1, requests, 2.0, counts};
}

StressResults Results(std::vector<StressSample> samples) {
  StressResults results;
  results.options.threads = {1, 64};
  results.options.rounds = 3;
  results.requests_per_loop = 8;
  results.cpus = 2;
  results.samples = std::move(samples);
  return results;
}

TEST(StressReport, GivesMediansAndTheSpeedUpAgainstOneThread) {
  const ContentionCounts none{};
  const ContentionCounts contended{
      .futex_waits = 100, .futex_wakes = 300, .voluntary_switches = 50};
  const std::vector<StressRow> rows = SummarizeStress(Results({
      Sample(1, 2000, none),
      Sample(64, 100, contended),
      Sample(1, 4000, none),
      Sample(64, 1000, contended),
      Sample(1, 3000, none),
      Sample(64, 500, contended),
  }));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].threads, 1);
  EXPECT_DOUBLE_EQ(rows[0].ops_per_second, 1500);  // the median of 1000, 2000, 1500
  EXPECT_DOUBLE_EQ(rows[0].speedup, 1);
  EXPECT_DOUBLE_EQ(*rows[0].futex_waits_per_op, 0);
  EXPECT_EQ(rows[1].threads, 64);
  EXPECT_DOUBLE_EQ(rows[1].ops_per_second, 250);
  EXPECT_DOUBLE_EQ(rows[1].speedup, 250.0 / 1500);
  EXPECT_DOUBLE_EQ(*rows[1].futex_waits_per_op, 0.2);  // of 1 (100/100), 0.1, 0.2
  EXPECT_DOUBLE_EQ(*rows[1].futex_wakes_per_op, 0.6);
  EXPECT_DOUBLE_EQ(*rows[1].switches_per_op, 0.1);
}

TEST(StressReport, ContentionIsNotApplicableWithoutTheMeter) {
  StressResults results = Results({Sample(1, 1000, std::nullopt), Sample(64, 500, std::nullopt)});
  results.meter_problem = "perf_event_open: Permission denied";
  const std::vector<StressRow> rows = SummarizeStress(results);
  EXPECT_FALSE(rows[1].futex_waits_per_op.has_value());
  const std::string table = StressMarkdown(results);
  EXPECT_THAT(table, HasSubstr("| 64 | 250 | 0.50 | n/a | n/a | n/a |"));
  EXPECT_THAT(table, HasSubstr("n/a (perf_event_open: Permission denied)"));
  EXPECT_THAT(StressJson(results), HasSubstr("\"futex_waits_per_op\": null"));
}

TEST(StressReport, SaysWhatTheCpusAllow) {
  const std::string table = StressMarkdown(Results({Sample(1, 1000, ContentionCounts{})}));
  EXPECT_THAT(table, HasSubstr("8 requests"));
  EXPECT_THAT(table, HasSubstr("may run on 2 CPUs: ops/s cannot grow past 2 threads"));
  EXPECT_THAT(table, HasSubstr("collapsing at 64 threads"));
}

}  // namespace
}  // namespace ringfuse::tools
