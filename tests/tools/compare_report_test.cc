// ringfuse-bench compare's tables: medians over rounds with their ratios, the flag on a result
// that beats native (the negative control of a run: FUSE cannot beat the directory it serves
// unless a cache answered), errors shown instead of hidden behind other rounds' values, a row per
// client thread count, and the daemon's system call and contention rows.
#include "tools/compare_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/tools/compare_test_options.h"

namespace ringfuse::tools {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

CompareOptions Options() {
  CompareOptions options = TestOptions({"randread", "null"}, {kDefaultClientThreads});
  options.rounds = 3;
  return options;
}

Sample Value(int round, const std::string& config, const std::string& workload,
             const std::string& metric, double value) {
  return {round, config, workload, metric, value, ""};
}

// The markdown line of the medians table whose title starts with `title`.
std::string Line(const std::string& markdown, const std::string& title) {
  for (absl::string_view line : absl::StrSplit(markdown, '\n')) {
    if (absl::StartsWith(line, "| " + title)) return std::string(line);
  }
  return "";
}

TEST(CompareReport, MedianOfRoundsWithRatiosAgainstNativeAndTheFirstDaemon) {
  std::vector<Sample> samples;
  for (int round = 1; round <= 3; ++round) {
    samples.push_back(Value(round, "native", "randread", "iops_1job", 1000 * round));  // 2000
    samples.push_back(Value(round, "a", "randread", "iops_1job", 100 * round));        // 200
    samples.push_back(Value(round, "b", "randread", "iops_1job", 400));
  }
  const std::string line =
      Line(MarkdownReport(Options(), samples, "cmd"), "4k O_DIRECT random read, 1 job, IOPS");
  EXPECT_THAT(line, HasSubstr("| 2.00k (10.00x d) | 200 (0.10x n) | 400 (0.20x n, 2.00x d) |"));
  EXPECT_THAT(line, Not(HasSubstr("beats native")));
}

TEST(CompareReport, ThroughputAboveNativeIsFlagged) {
  std::vector<Sample> samples = {Value(1, "native", "randread", "iops_1job", 20000),
                                 Value(1, "a", "randread", "iops_1job", 140000)};
  EXPECT_THAT(Line(MarkdownReport(Options(), samples, "cmd"), "4k O_DIRECT random read, 1 job"),
              HasSubstr("140.0k (7.00x n) **beats native: check caching**"));
}

TEST(CompareReport, LatencyBelowNativeIsFlaggedAndAboveIsNot) {
  std::vector<Sample> samples = {Value(1, "native", "null", "p50_us", 2.0),
                                 Value(1, "a", "null", "p50_us", 1.0),
                                 Value(1, "b", "null", "p50_us", 30.0)};
  const std::string line =
      Line(MarkdownReport(Options(), samples, "cmd"), "null round trip (stat of one file), p50");
  EXPECT_THAT(line, HasSubstr("| 1.00 (0.50x n) **beats native: check caching** |"));
  EXPECT_THAT(line, HasSubstr("| 30.0 (15.00x n, 30.00x d) |"));
}

TEST(CompareReport, AnErrorInOneRoundShowsInsteadOfTheOthersMedian) {
  std::vector<Sample> samples = {
      Value(1, "a", "randread", "iops_1job", 100),
      {2, "a", "randread", "iops_1job", std::nullopt, "error: O_DIRECT pread: Input/output error"}};
  const Cell cell = Summarize(samples, "a", {"randread", "iops_1job"});
  EXPECT_FALSE(cell.median);
  EXPECT_EQ(cell.note, "error: O_DIRECT pread: Input/output error");
}

TEST(CompareReport, NotApplicableIsNeitherAValueNorAnError) {
  std::vector<Sample> samples = {{1, "floor/auto", "randread", "iops_1job", std::nullopt, "n/a"}};
  EXPECT_THAT(Line(MarkdownReport(Options(), samples, "cmd"), "4k O_DIRECT random read, 1 job"),
              HasSubstr("| n/a |"));
}

TEST(CompareReport, SpreadIsMaxOverMinBetweenRounds) {
  std::vector<Sample> samples = {Value(1, "a", "null", "ops_per_s", 100),
                                 Value(2, "a", "null", "ops_per_s", 150),
                                 Value(3, "a", "null", "ops_per_s", 120)};
  const Cell cell = Summarize(samples, "a", {"null", "ops_per_s"});
  EXPECT_EQ(cell.median, 120);
  EXPECT_DOUBLE_EQ(*cell.spread_percent, 50);
}

TEST(CompareReport, SmallValuesKeepTwoSignificantDigits) {
  EXPECT_EQ(Number(0.0025), "0.0025");
  EXPECT_EQ(Number(0.000088), "8.8e-05");
  EXPECT_EQ(Number(0.25), "0.25");
  EXPECT_EQ(Number(0), "0.00");
  EXPECT_EQ(Number(14.5), "14.5");
}

TEST(CompareReport, CsvQuotesFieldsWithCommas) {
  std::vector<Sample> samples = {
      {1, "a", "create", "ops_per_s", std::nullopt, "error: create x: No space, really"},
      Value(2, "a", "create", "ops_per_s", 6060)};
  EXPECT_EQ(CsvText(samples),
            "round,config,workload,threads,metric,value\n"
            "1,a,create,,ops_per_s,\"error: create x: No space, really\"\n"
            "2,a,create,,ops_per_s,6060\n");
}

TEST(CompareReport, CsvSaysEachSamplesThreadCount) {
  Sample sample = Value(1, "a", "stat", "ops_per_s", 5000);
  sample.threads = 4;
  EXPECT_THAT(CsvText({sample}), HasSubstr("\n1,a,stat,4,ops_per_s,5000\n"));
}

// "stat/create at thread counts t" as (workload, metric, threads), in the order of ReportRows.
std::vector<std::string> RowKeys(const std::vector<ReportRow>& rows) {
  std::vector<std::string> keys;
  for (const ReportRow& row : rows) {
    keys.push_back(absl::StrCat(row.workload, " ", row.threads, " ", row.metric));
  }
  return keys;
}

TEST(CompareReport, StatAndCreateHaveRowsAtEachThreadCountAndOtherWorkloadsOnce) {
  EXPECT_THAT(
      RowKeys(ReportRows({"stat", "null"}, {1, 4})),
      ElementsAre("stat 1 ops_per_s", "stat 1 daemon_cpu_us_per_op",
                  "stat 1 daemon_syscalls_per_op", "stat 1 daemon_futex_waits_per_op",
                  "stat 1 daemon_futex_wakes_per_op", "stat 1 daemon_voluntary_switches_per_op",
                  "stat 4 ops_per_s", "stat 4 daemon_cpu_us_per_op",
                  "stat 4 daemon_syscalls_per_op", "stat 4 daemon_futex_waits_per_op",
                  "stat 4 daemon_futex_wakes_per_op", "stat 4 daemon_voluntary_switches_per_op",
                  "null 0 p50_us", "null 0 p99_us", "null 0 p999_us", "null 0 ops_per_s",
                  "null 0 daemon_cpu_us_per_op", "null 0 daemon_syscalls_per_op",
                  "null 0 daemon_futex_waits_per_op", "null 0 daemon_futex_wakes_per_op",
                  "null 0 daemon_voluntary_switches_per_op", "daemon 0 peak_rss_mib",
                  "daemon 0 clean_stop"));
}

TEST(CompareReport, TitlesNameTheThreadCountOfStatAndCreate) {
  EXPECT_EQ(RowTitle({"stat", "ops_per_s", 2}), "stat storm, 2 threads, ops/s");  // as before
  EXPECT_EQ(RowTitle({"stat", "ops_per_s", 1}), "stat storm, 1 thread, ops/s");
  EXPECT_EQ(RowTitle({"create", kFutexWakesMetric, 16}),
            "create+unlink, 16 threads, daemon futex wakes/op");
  EXPECT_EQ(RowTitle({"null", kSwitchesMetric}),
            "null round trip (stat of one file), daemon voluntary switches/op");
  EXPECT_EQ(RowTitle({"stat", kSyscallsMetric, 2}),
            "stat storm, 2 threads, daemon system calls/op");
}

TEST(CompareReport, MediansOfOneThreadCountIgnoreTheOthers) {
  std::vector<Sample> samples = {Value(1, "a", "stat", "ops_per_s", 100),
                                 Value(1, "a", "stat", "ops_per_s", 900)};
  samples[0].threads = 1;
  samples[1].threads = 8;
  EXPECT_EQ(Summarize(samples, "a", {"stat", "ops_per_s", 1}).median, 100);
  EXPECT_EQ(Summarize(samples, "a", {"stat", "ops_per_s", 8}).median, 900);
}

TEST(CompareReport, ContentionRowsFollowEachWorkloadWithoutRatiosOrNativeFlag) {
  std::vector<Sample> samples = {Value(1, "native", "null", "ops_per_s", 100000),
                                 Value(1, "a", "null", kFutexWaitsMetric, 0.0004),
                                 Value(1, "b", "null", kFutexWaitsMetric, 1.5)};
  const std::string markdown = MarkdownReport(Options(), samples, "cmd");
  const std::string line = Line(markdown, "null round trip (stat of one file), daemon futex waits");
  EXPECT_THAT(line, HasSubstr("| – | 0.0004 | 1.50 | – |"));
  EXPECT_THAT(line, Not(HasSubstr("beats native")));
  EXPECT_THAT(Line(markdown, "null round trip (stat of one file), daemon futex wakes/op"),
              Not(testing::IsEmpty()));
  EXPECT_THAT(Line(markdown, "null round trip (stat of one file), daemon voluntary switches/op"),
              Not(testing::IsEmpty()));
}

// Unlike futex calls, a daemon makes system calls for its work (at least one for each batch of
// requests): counts well above 0, whose ratio against the first daemon says something.
TEST(CompareReport, SystemCallRowsHaveTheirRatioAgainstTheFirstDaemonButNoNativeFlag) {
  std::vector<Sample> samples = {Value(1, "native", "null", "ops_per_s", 100000),
                                 Value(1, "a", "null", kSyscallsMetric, 2.0),
                                 Value(1, "b", "null", kSyscallsMetric, 3.0)};
  const std::string line = Line(MarkdownReport(Options(), samples, "cmd"),
                                "null round trip (stat of one file), daemon system calls/op");
  EXPECT_THAT(line, HasSubstr("| – | 2.00 | 3.00 (1.50x d) | – |"));
  EXPECT_THAT(line, Not(HasSubstr("beats native")));
}

TEST(CompareReport, UncountedContentionSaysWhyInItsCell) {
  std::vector<Sample> samples = {
      {1, "a", "null", kFutexWakesMetric, std::nullopt, "n/a: mount tracefs: Permission denied"}};
  EXPECT_THAT(Line(MarkdownReport(Options(), samples, "cmd"),
                   "null round trip (stat of one file), daemon futex wakes/op"),
              HasSubstr("| n/a: mount tracefs: Permission denied |"));
}

TEST(CompareReport, OneThreadCountMakesNoScalingSection) {
  CompareOptions options = Options();
  options.workloads = {"stat", "create"};
  EXPECT_THAT(MarkdownReport(options, {}, "cmd"), Not(HasSubstr("Scaling")));
  options.threads = {1, 2};
  EXPECT_THAT(MarkdownReport(options, {}, "cmd"), HasSubstr("\n## Scaling\n"));
}

}  // namespace
}  // namespace ringfuse::tools
