// ringfuse-bench handover's and crash's tables: medians and maxima over the runs, times shown in
// milliseconds, the failed calls of every run added up, and a column per tree size in order.
#include "tools/handover_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ringfuse::tools {
namespace {

using ::testing::HasSubstr;

HandoverSample Sample(double client_max_us, double pause_us, int failed_calls) {
  HandoverSample sample;
  sample.client_max_us = client_max_us;
  sample.pause_us = pause_us;
  sample.state_bytes = 178;
  sample.state_fds = 3;
  sample.failed_calls = failed_calls;
  return sample;
}

TEST(HandoverSummarize, GivesTheMedianAndTheMaximum) {
  const std::vector<HandoverSample> samples = {Sample(3000, 0, 0), Sample(1000, 0, 0),
                                               Sample(9000, 0, 0), Sample(2000, 0, 0),
                                               Sample(4000, 0, 0)};
  const MedianAndMax summary = Summarize(samples, &HandoverSample::client_max_us);
  EXPECT_EQ(summary.median, 3000);
  EXPECT_EQ(summary.max, 9000);
}

TEST(HandoverSummarize, OfNothingIsZero) {
  const MedianAndMax summary = Summarize(std::vector<HandoverSample>{}, &HandoverSample::pause_us);
  EXPECT_EQ(summary.median, 0);
  EXPECT_EQ(summary.max, 0);
}

TEST(HandoverTable, ShowsTimesInMillisecondsAndAddsUpFailedCalls) {
  const std::vector<HandoverResult> results = {
      {0, 1, {Sample(2200, 1500, 0), Sample(4100, 1700, 0), Sample(2000, 1600, 0)}},
      {100000, 100001, {Sample(250000, 253000, 1), Sample(330000, 329000, 2)}},
  };
  const std::string table = HandoverTable(results);
  EXPECT_THAT(table, HasSubstr("| cell: median / max over the runs | 0 inodes | 100000 inodes |"));
  EXPECT_THAT(table, HasSubstr("| nodes in ringfused's table | 1 | 100001 |"));
  EXPECT_THAT(table, HasSubstr("| runs | 3 | 2 |"));
  EXPECT_THAT(table,
              HasSubstr("| client pause: longest stat call, ms | 2.20 / 4.10 | 250.00 / 330.00 |"));
  EXPECT_THAT(table, HasSubstr("| ringfused pause_us, ms | 1.60 / 1.70 | 253.00 / 329.00 |"));
  EXPECT_THAT(table, HasSubstr("| state bytes | 178 / 178 | 178 / 178 |"));
  EXPECT_THAT(table, HasSubstr("| failed stat calls, all runs | 0 | 3 |"));
}

TEST(HandoverTable, MarksATreeWithoutRuns) {
  const std::string table = HandoverTable({{10000, 10001, {}}});
  EXPECT_THAT(table, HasSubstr("| runs | 0 |"));
  EXPECT_THAT(table, HasSubstr("| ringfused pause_us, ms | - |"));
}

TEST(CrashTable, ShowsItsOwnRowsInMilliseconds) {
  CrashSample sample;
  sample.client_max_us = 31000;
  sample.recovery_us = 29500;
  sample.first_walk_us = 812000;
  sample.failed_calls = 1;
  const std::string table = CrashTable({{10000, 10001, {sample}}});
  EXPECT_THAT(table, HasSubstr("| client pause: longest stat call, ms | 31.00 / 31.00 |"));
  EXPECT_THAT(table, HasSubstr("| kill to a daemon serving again, ms | 29.50 / 29.50 |"));
  EXPECT_THAT(table, HasSubstr("unless they stayed valid), ms | 812.0 / 812.0 |"));
  EXPECT_THAT(table, HasSubstr("| failed stat calls, all runs | 1 |"));
  EXPECT_THAT(table, ::testing::Not(HasSubstr("save_us")));
}

}  // namespace
}  // namespace ringfuse::tools
