// ringfuse-bench compare --check, on output written here rather than by a run: a full output
// passes, and one missing figure fails it by name, the daemon's contention among them where the
// meter works (and only there), and the Scaling section where two thread counts ran.
#include "tools/compare_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/daemon/test_files.h"
#include "tests/tools/compare_test_options.h"
#include "tools/compare_report.h"
#include "tools/compare_scaling_chart.h"

namespace ringfuse::tools {
namespace {

using ::ringfuse::testing::TempDir;
using ::ringfuse::testing::WriteFile;
using ::testing::HasSubstr;

CompareOptions Options(const std::string& output_dir) {
  CompareOptions options = TestOptions({"stat", "null"}, {1, 2}, {"native", "ringfused:name=a"});
  options.output_dir = output_dir;
  return options;
}

// A value in every row for every config (native: no daemon rows), but `left_out`.
std::vector<Sample> EveryFigure(const CompareOptions& options, const std::string& left_out = "") {
  std::vector<Sample> samples;
  for (const CompareConfig& config : options.configs) {
    for (const ReportRow& row : ReportRows(options.workloads, options.threads)) {
      const bool native = config.kind == CompareConfig::Kind::kNative;
      if ((native && IsDaemonMetric(row.metric)) || row.metric == left_out) continue;
      samples.push_back({1, config.label, row.workload, row.metric, 1.0, "", row.threads});
    }
  }
  return samples;
}

void WriteOutput(const CompareOptions& options, const std::vector<Sample>& samples) {
  WriteFile(options.output_dir + "/results.csv", CsvText(samples));
  WriteFile(options.output_dir + "/results.md", MarkdownReport(options, samples, "cmd"));
  WriteFile(options.output_dir + "/chart.svg", "<svg/>");
  WriteFile(options.output_dir + "/scaling.svg", ScalingChartSvg(options, samples));
}

TEST(CompareCheck, AFullOutputPasses) {
  TempDir dir("compare-check");
  const CompareOptions options = Options(dir.path());
  WriteOutput(options, EveryFigure(options));
  EXPECT_TRUE(CheckOutput(options, /*contention_metered=*/true).ok());
}

TEST(CompareCheck, AMissingContentionFigureFailsWhereTheMeterWorks) {
  TempDir dir("compare-check");
  const CompareOptions options = Options(dir.path());
  WriteOutput(options, EveryFigure(options, kFutexWakesMetric));
  const absl::Status checked = CheckOutput(options, /*contention_metered=*/true);
  ASSERT_FALSE(checked.ok());
  EXPECT_THAT(checked.message(), HasSubstr("round 1 a stat x1 daemon_futex_wakes_per_op"));
  EXPECT_THAT(checked.message(), HasSubstr("round 1 a null daemon_futex_wakes_per_op"));
  EXPECT_THAT(checked.message(), ::testing::Not(HasSubstr("native")));
}

TEST(CompareCheck, ContentionIsNotAskedForWhereTheMeterCannotWork) {
  TempDir dir("compare-check");
  const CompareOptions options = Options(dir.path());
  WriteOutput(options, EveryFigure(options, kSwitchesMetric));
  EXPECT_TRUE(CheckOutput(options, /*contention_metered=*/false).ok());
}

TEST(CompareCheck, AMissingThreadCountFails) {
  TempDir dir("compare-check");
  CompareOptions options = Options(dir.path());
  WriteOutput(options, EveryFigure(options));
  options.threads = {1, 2, 4};  // the run was asked for 4 threads too, and has no figure of it
  const absl::Status checked = CheckOutput(options, /*contention_metered=*/true);
  ASSERT_FALSE(checked.ok());
  EXPECT_THAT(checked.message(), HasSubstr("round 1 native stat x4 ops_per_s"));
}

TEST(CompareCheck, AReportWithoutItsScalingSectionOrChartFails) {
  TempDir dir("compare-check");
  const CompareOptions options = Options(dir.path());
  WriteOutput(options, EveryFigure(options));
  WriteFile(dir.path() + "/results.md", "# ringfuse-bench compare\n");
  WriteFile(dir.path() + "/scaling.svg", "");
  const absl::Status checked = CheckOutput(options, /*contention_metered=*/true);
  ASSERT_FALSE(checked.ok());
  EXPECT_THAT(checked.message(), HasSubstr("scaling.svg"));
  EXPECT_THAT(checked.message(), HasSubstr("results.md's Scaling section"));
}

}  // namespace
}  // namespace ringfuse::tools
