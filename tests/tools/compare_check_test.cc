// ringfuse-bench compare --check, on output written here rather than by a run: a full output
// passes, and one missing figure fails it by name, the daemon's system calls and contention among
// them where they can be counted (and only there), and the Scaling section where two thread
// counts ran.
#include "tools/compare_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/daemon/test_files.h"
#include "tests/tools/compare_test_options.h"
#include "tools/compare_report.h"
#include "tools/compare_scaling_chart.h"

namespace ringfuse::tools {
namespace {

using ::ringfuse::testing::TempDir;
using ::ringfuse::testing::WriteFile;
using ::testing::HasSubstr;
using ::testing::Not;

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

// What the meters of tools/daemon_meters.h count where they work (root, tracefs): the figures
// that are "n/a: why" without them.
const std::vector<std::string> kMeteredFigures = {kSyscallsMetric, kFutexWaitsMetric,
                                                  kFutexWakesMetric, kSwitchesMetric};

TEST(CompareCheck, AFullOutputPasses) {
  TempDir dir("compare-check");
  const CompareOptions options = Options(dir.path());
  WriteOutput(options, EveryFigure(options));
  EXPECT_TRUE(CheckOutput(options, /*uncountable=*/{}).ok());
}

TEST(CompareCheck, AMissingSystemCallOrContentionFigureFailsWhereItCanBeCounted) {
  for (const std::string metric : {kSyscallsMetric, kFutexWakesMetric}) {
    SCOPED_TRACE(metric);
    TempDir dir("compare-check");
    const CompareOptions options = Options(dir.path());
    WriteOutput(options, EveryFigure(options, metric));
    const absl::Status checked = CheckOutput(options, /*uncountable=*/{});
    ASSERT_FALSE(checked.ok());
    EXPECT_THAT(checked.message(), HasSubstr("round 1 a stat x1 " + metric));
    EXPECT_THAT(checked.message(), HasSubstr("round 1 a null " + metric));
    EXPECT_THAT(checked.message(), Not(HasSubstr("native")));
  }
}

TEST(CompareCheck, FiguresThatCannotBeCountedHereAreNotAskedFor) {
  TempDir dir("compare-check");
  const CompareOptions options = Options(dir.path());
  std::vector<Sample> samples = EveryFigure(options);
  std::erase_if(samples, [](const Sample& sample) {
    return std::find(kMeteredFigures.begin(), kMeteredFigures.end(), sample.metric) !=
           kMeteredFigures.end();
  });
  WriteOutput(options, samples);
  EXPECT_TRUE(CheckOutput(options, kMeteredFigures).ok());
}

// The negative control of the one above: a figure that cannot be counted excuses only itself.
TEST(CompareCheck, AnUncountableFigureDoesNotExcuseAnother) {
  TempDir dir("compare-check");
  const CompareOptions options = Options(dir.path());
  WriteOutput(options, EveryFigure(options, kSyscallsMetric));
  const absl::Status checked = CheckOutput(options, /*uncountable=*/{kSwitchesMetric});
  ASSERT_FALSE(checked.ok());
  EXPECT_THAT(checked.message(), HasSubstr("round 1 a null daemon_syscalls_per_op"));
}

TEST(CompareCheck, AMissingThreadCountFails) {
  TempDir dir("compare-check");
  CompareOptions options = Options(dir.path());
  WriteOutput(options, EveryFigure(options));
  options.threads = {1, 2, 4};  // the run was asked for 4 threads too, and has no figure of it
  const absl::Status checked = CheckOutput(options, /*uncountable=*/{});
  ASSERT_FALSE(checked.ok());
  EXPECT_THAT(checked.message(), HasSubstr("round 1 native stat x4 ops_per_s"));
}

TEST(CompareCheck, AReportWithoutItsScalingSectionOrChartFails) {
  TempDir dir("compare-check");
  const CompareOptions options = Options(dir.path());
  WriteOutput(options, EveryFigure(options));
  WriteFile(dir.path() + "/results.md", "# ringfuse-bench compare\n");
  WriteFile(dir.path() + "/scaling.svg", "");
  const absl::Status checked = CheckOutput(options, /*uncountable=*/{});
  ASSERT_FALSE(checked.ok());
  EXPECT_THAT(checked.message(), HasSubstr("scaling.svg"));
  EXPECT_THAT(checked.message(), HasSubstr("results.md's Scaling section"));
}

}  // namespace
}  // namespace ringfuse::tools
