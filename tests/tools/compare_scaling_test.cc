// ringfuse-bench compare's Scaling section and scaling.svg: a row per client thread count, each
// config's ops/s with its ratio against the first daemon config and against its own fewest
// threads, the floor's create shown as not applicable, and nothing at all with one count.
#include "tools/compare_scaling.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "tests/tools/compare_test_options.h"
#include "tools/compare_scaling_chart.h"

namespace ringfuse::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

CompareOptions Options() { return TestOptions({"stat", "null", "create"}, {1, 2, 4}); }

Sample Ops(const std::string& config, const std::string& workload, int threads, double value) {
  return {1, config, workload, "ops_per_s", value, "", threads};
}

// The table lines of the section after the heading that contains `heading`.
std::vector<std::string> TableAfter(const std::string& markdown, const std::string& heading) {
  std::vector<std::string> lines;
  bool in_section = false;
  for (absl::string_view line : absl::StrSplit(markdown, '\n')) {
    if (absl::StartsWith(line, "###")) in_section = absl::StrContains(line, heading);
    if (in_section && absl::StartsWith(line, "| ")) lines.emplace_back(line);
  }
  return lines;
}

TEST(CompareScaling, StatAndCreateRanAtSeveralCountsAndNothingElse) {
  EXPECT_THAT(ScaledWorkloads(Options()), testing::ElementsAre("stat", "create"));
}

TEST(CompareScaling, ARowPerCountWithRatiosAgainstTheFirstDaemonAndTheFewestThreads) {
  const std::vector<Sample> samples = {
      Ops("native", "stat", 1, 1230000),  Ops("native", "stat", 2, 2460000),
      Ops("a", "stat", 1, 10000),         Ops("a", "stat", 2, 15000),
      Ops("a", "stat", 4, 20000),         Ops("b", "stat", 1, 20000),
      Ops("b", "stat", 2, 40000),         Ops("b", "stat", 4, 80000),
      Ops("floor/auto", "stat", 1, 50000)};
  const std::vector<std::string> table =
      TableAfter(ScalingSection(Options(), samples), "stat storm");
  ASSERT_EQ(table.size(), 4u);  // the header, then 1, 2 and 4 threads
  EXPECT_EQ(table[0], "| threads | native | a | b | floor/auto |");
  EXPECT_EQ(table[1], "| 1 | 1.23M (123.00x d) | 10.0k | 20.0k (2.00x d) | 50.0k (5.00x d) |");
  EXPECT_EQ(table[2],
            "| 2 | 2.46M (164.00x d, 2.00x s) | 15.0k (1.50x s) | 40.0k (2.67x d, 2.00x s) | – |");
  EXPECT_EQ(table[3], "| 4 | – | 20.0k (2.00x s) | 80.0k (4.00x d, 4.00x s) | – |");
}

TEST(CompareScaling, TheFloorsCreateIsNotApplicable) {
  std::vector<Sample> samples = {Ops("a", "create", 1, 3000)};
  samples.push_back({1, "floor/auto", "create", "ops_per_s", std::nullopt, "n/a", 1});
  const std::vector<std::string> table =
      TableAfter(ScalingSection(Options(), samples), "create+unlink");
  ASSERT_EQ(table.size(), 4u);
  EXPECT_EQ(table[1], "| 1 | – | 3.00k | – | n/a |");
}

TEST(CompareScaling, OneCountOrNoScaledWorkloadMakesNoSectionAndNoChart) {
  CompareOptions one_count = Options();
  one_count.threads = {2};
  EXPECT_THAT(ScalingSection(one_count, {}), IsEmpty());
  EXPECT_THAT(ScalingChartSvg(one_count, {}), IsEmpty());
  CompareOptions unscaled = Options();
  unscaled.workloads = {"null", "readdir"};
  EXPECT_THAT(ScalingSection(unscaled, {}), IsEmpty());
  EXPECT_THAT(ScalingChartSvg(unscaled, {}), IsEmpty());
}

TEST(CompareScaling, TheChartHasAPanelPerWorkloadAndALinePerConfigWithValues) {
  const std::vector<Sample> samples = {Ops("a", "stat", 1, 10000), Ops("a", "stat", 2, 15000),
                                       Ops("b", "stat", 4, 80000), Ops("a", "create", 1, 900)};
  const std::string svg = ScalingChartSvg(Options(), samples);
  EXPECT_THAT(svg, HasSubstr("stat storm, ops/s by client threads"));
  EXPECT_THAT(svg, HasSubstr("create+unlink, ops/s by client threads"));
  // From 10k ops/s at the bottom (y 280) to 100k at the top (y 60), a decade each: a's stat
  // line joins its two values; b's has one point; native and the floor have none.
  EXPECT_THAT(svg, HasSubstr(">10.0k</text>"));
  EXPECT_THAT(svg, HasSubstr(">100.0k</text>"));
  EXPECT_THAT(svg, HasSubstr("<path d=\"M60 280 L215 242 \" fill=\"none\" stroke=\"#f28e2b\""));
  EXPECT_THAT(svg, HasSubstr("<path d=\"M370 82 \" fill=\"none\" stroke=\"#e15759\""));
  EXPECT_THAT(svg, Not(HasSubstr("stroke=\"#4e79a7\" stroke-width")));
}

}  // namespace
}  // namespace ringfuse::tools
