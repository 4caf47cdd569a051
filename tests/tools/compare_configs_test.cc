// ringfuse-bench compare's CONFIG arguments: the command line each one runs, its column label,
// and the FUSE-over-io_uring switch; a wrong key is a usage error, never a silent default.
#include "tools/compare_configs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ringfuse::tools {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const DaemonBinaries kBinaries{"/bin/ringfused", "/proc/self/exe"};

TEST(CompareConfigs, NativeRunsNothing) {
  absl::StatusOr<CompareConfig> config = ParseCompareConfig("native", kBinaries);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->kind, CompareConfig::Kind::kNative);
  EXPECT_EQ(config->label, "native");
  EXPECT_TRUE(config->argv.empty());
}

TEST(CompareConfigs, RingfusedDefaultsToAutoInTheForeground) {
  absl::StatusOr<CompareConfig> config = ParseCompareConfig("ringfused", kBinaries);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->label, "ringfused/auto");
  EXPECT_THAT(config->argv,
              ElementsAre("/bin/ringfused", "{src}", "{mnt}", "-f", "--transport=auto"));
  EXPECT_FALSE(config->needs_uring_switch);  // auto takes the machine as it is
}

TEST(CompareConfigs, RingfusedKeysBecomeOptions) {
  absl::StatusOr<CompareConfig> config = ParseCompareConfig(
      "ringfused:transport=uring-cmd,cache=off,passthrough,depth=64,threads=3,o=entry_timeout=0",
      kBinaries);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->label,
            "ringfused/uring-cmd/nocache/passthrough/depth64/threads3/entry_timeout=0");
  EXPECT_THAT(config->argv, ElementsAre("/bin/ringfused", "{src}", "{mnt}", "-f", "-o", "cache=off",
                                        "-o", "passthrough", "--queue-depth=64", "--threads=3",
                                        "-o", "entry_timeout=0", "--transport=uring-cmd"));
  EXPECT_TRUE(config->needs_uring_switch);
}

TEST(CompareConfigs, TraceWritesAJsonTrace) {
  absl::StatusOr<CompareConfig> config =
      ParseCompareConfig("ringfused:transport=threads,trace=/tmp/t.jsonl", kBinaries);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->label, "ringfused/threads/trace");
  EXPECT_THAT(config->argv, ElementsAre("/bin/ringfused", "{src}", "{mnt}", "-f",
                                        "--trace=/tmp/t.jsonl", "--transport=threads"));
}

TEST(CompareConfigs, NameSetsTheLabel) {
  absl::StatusOr<CompareConfig> config =
      ParseCompareConfig("ringfused:name=mine,transport=threads", kBinaries);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->label, "mine");
}

TEST(CompareConfigs, WrongRingfusedKeysAreUsageErrors) {
  for (const char* text : {"ringfused:cache=maybe", "ringfused:depth=0", "ringfused:threads=x",
                           "ringfused:transport=fast", "ringfused:passthrough=1", "ringfused:bogus",
                           "ringfused:o=", "ringfused:trace=", "native:x", "nfs"}) {
    absl::StatusOr<CompareConfig> config = ParseCompareConfig(text, kBinaries);
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument) << text;
  }
}

TEST(CompareConfigs, FloorServesTheNullFilesystemFromThisProgram) {
  absl::StatusOr<CompareConfig> config = ParseCompareConfig("floor:transport=uring-cmd", kBinaries);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->kind, CompareConfig::Kind::kFloor);
  EXPECT_EQ(config->label, "floor/uring-cmd");
  EXPECT_THAT(config->argv,
              ElementsAre("/proc/self/exe", "compare-serve-null", "uring-cmd", "{mnt}"));
  EXPECT_TRUE(config->needs_uring_switch);
  EXPECT_FALSE(ParseCompareConfig("floor:cache=off", kBinaries).ok());
}

TEST(CompareConfigs, CommandIsSplitOnSpacesAndSubstituted) {
  absl::StatusOr<CompareConfig> config =
      ParseCompareConfig("cmd:peer=/opt/peer --foreground  -o x=y {src} {mnt}", kBinaries);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->label, "peer");
  EXPECT_THAT(Substitute(config->argv, "/s", "/m"),
              ElementsAre("/opt/peer", "--foreground", "-o", "x=y", "/s", "/m"));
}

TEST(CompareConfigs, CommandNeedsALabelAndACommand) {
  for (const char* text : {"cmd:", "cmd:peer", "cmd:=/opt/peer {mnt}", "cmd:peer= "}) {
    absl::StatusOr<CompareConfig> config = ParseCompareConfig(text, kBinaries);
    EXPECT_FALSE(config.ok()) << text;
    EXPECT_THAT(std::string(config.status().message()), HasSubstr("cmd:")) << text;
  }
}

}  // namespace
}  // namespace ringfuse::tools
