// ringfuse-bench compare's tables: medians over rounds with their ratios, the flag on a result
// that beats native (the negative control of a run: FUSE cannot beat the directory it serves
// unless a cache answered), and errors shown instead of hidden behind other rounds' values.
#include "tools/compare_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_split.h"

namespace ringfuse::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

CompareOptions Options() {
  CompareOptions options;
  options.rounds = 3;
  options.workloads = {"randread", "null"};
  const DaemonBinaries binaries{"ringfused", "self"};
  for (const char* text : {"native", "ringfused:name=a", "ringfused:name=b", "floor"}) {
    options.configs.push_back(*ParseCompareConfig(text, binaries));
  }
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

TEST(CompareReport, CsvQuotesFieldsWithCommas) {
  std::vector<Sample> samples = {
      {1, "a", "create", "ops_per_s", std::nullopt, "error: create x: No space, really"},
      Value(2, "a", "create", "ops_per_s", 6060)};
  EXPECT_EQ(CsvText(samples),
            "round,config,workload,metric,value\n"
            "1,a,create,ops_per_s,\"error: create x: No space, really\"\n"
            "2,a,create,ops_per_s,6060\n");
}

}  // namespace
}  // namespace ringfuse::tools
