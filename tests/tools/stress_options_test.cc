// ringfuse-bench stress's command line: the defaults as documented, and every bad value a usage
// error that names its flag, never a silent default.
#include "tools/stress_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ringfuse::tools {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ErrorOf(const StressFlags& flags) {
  absl::StatusOr<StressOptions> options = ParseStressOptions(flags);
  EXPECT_FALSE(options.ok());
  return std::string(options.status().message());
}

TEST(StressOptions, DefaultsAreFourThreadCountsOfThreeSecondsThreeTimes) {
  absl::StatusOr<StressOptions> options = ParseStressOptions(StressFlags{});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_THAT(options->threads, ElementsAre(1, 2, 8, 64));
  EXPECT_EQ(options->seconds, 3);
  EXPECT_EQ(options->files, 10000);
  EXPECT_EQ(options->rounds, 3);
  EXPECT_EQ(options->dir, "/var/tmp");
  EXPECT_EQ(options->json, "");
}

TEST(StressOptions, ThreadCountsAreMeasuredRising) {
  absl::StatusOr<StressOptions> options = ParseStressOptions({.threads = "64,1,1024"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_THAT(options->threads, ElementsAre(1, 64, 1024));
}

TEST(StressOptions, ZeroThreadsIsAnError) {
  EXPECT_THAT(ErrorOf({.threads = "0"}), HasSubstr("--threads"));
  EXPECT_THAT(ErrorOf({.threads = "1,0,8"}), HasSubstr("--threads"));
}

TEST(StressOptions, ThreadCountsThatAreNoCountAreErrors) {
  for (const char* threads : {"", "1,,2", "-1", "two", "1.5", "8,", "1025"}) {
    EXPECT_THAT(ErrorOf({.threads = threads}), HasSubstr("--threads")) << threads;
  }
}

TEST(StressOptions, AThreadCountListedTwiceIsAnError) {
  EXPECT_THAT(ErrorOf({.threads = "1,8,1"}), HasSubstr("1 is given twice"));
}

TEST(StressOptions, CountsOutOfRangeNameTheirFlag) {
  EXPECT_THAT(ErrorOf({.seconds = 0}), HasSubstr("--seconds"));
  EXPECT_THAT(ErrorOf({.files = 0}), HasSubstr("--files"));
  EXPECT_THAT(ErrorOf({.files = kMaxStressFiles + 1}), HasSubstr("--files"));
  EXPECT_THAT(ErrorOf({.rounds = -3}), HasSubstr("--rounds"));
}

TEST(StressOptions, AnEmptyDirIsAnError) { EXPECT_THAT(ErrorOf({.dir = ""}), HasSubstr("--dir")); }

}  // namespace
}  // namespace ringfuse::tools
