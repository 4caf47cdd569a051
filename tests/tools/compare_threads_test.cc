// --threads of ringfuse-bench compare: a list of client thread counts, read in rising order, and
// every malformed list refused with the item that is wrong rather than run with a guess.
#include "tools/compare_threads.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ringfuse::tools {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CompareThreads, AListIsReadInRisingOrder) {
  absl::StatusOr<std::vector<int>> counts = ParseThreadCounts("16,1,4,2,8");
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_THAT(*counts, ElementsAre(1, 2, 4, 8, 16));
}

TEST(CompareThreads, OneCountIsAListOfOne) {
  absl::StatusOr<std::vector<int>> counts = ParseThreadCounts("2");
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_THAT(*counts, ElementsAre(2));
}

TEST(CompareThreads, ZeroThreadsIsRefused) {
  absl::StatusOr<std::vector<int>> counts = ParseThreadCounts("0,2");
  ASSERT_FALSE(counts.ok());
  EXPECT_THAT(counts.status().message(), HasSubstr("\"0\" is not a thread count"));
}

TEST(CompareThreads, ANegativeCountIsRefused) { EXPECT_FALSE(ParseThreadCounts("-1").ok()); }

TEST(CompareThreads, AWordIsRefused) {
  absl::StatusOr<std::vector<int>> counts = ParseThreadCounts("1,a");
  ASSERT_FALSE(counts.ok());
  EXPECT_THAT(counts.status().message(), HasSubstr("\"a\" is not a thread count"));
}

TEST(CompareThreads, ACountGivenTwiceIsRefused) {
  absl::StatusOr<std::vector<int>> counts = ParseThreadCounts("1,2,1");
  ASSERT_FALSE(counts.ok());
  EXPECT_THAT(counts.status().message(), HasSubstr("1 is given twice"));
}

TEST(CompareThreads, AnEmptyItemOrAnEmptyListIsRefused) {
  EXPECT_FALSE(ParseThreadCounts("1,,2").ok());
  EXPECT_FALSE(ParseThreadCounts("").ok());
  EXPECT_FALSE(ParseThreadCounts("1,2,").ok());
}

TEST(CompareThreads, MoreThanTheMostThreadsIsRefused) {
  EXPECT_TRUE(ParseThreadCounts(std::to_string(kMaxClientThreads)).ok());
  EXPECT_FALSE(ParseThreadCounts(std::to_string(kMaxClientThreads + 1)).ok());
}

}  // namespace
}  // namespace ringfuse::tools
