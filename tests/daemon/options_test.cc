#include "daemon/options.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringfuse::daemon {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<DaemonOptions> Parse(std::vector<std::string_view> args) {
  return ParseDaemonArgs(args);
}

std::string ErrorOf(std::vector<std::string_view> args) {
  const absl::StatusOr<DaemonOptions> parsed = Parse(std::move(args));
  EXPECT_FALSE(parsed.ok());
  return parsed.ok() ? "" : std::string(parsed.status().message());
}

TEST(DaemonOptions, SourceAndMountpointWithDefaults) {
  const absl::StatusOr<DaemonOptions> parsed = Parse({"/src", "/mnt"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->mode, Mode::kPassthrough);
  EXPECT_EQ(parsed->source, "/src");
  EXPECT_EQ(parsed->mountpoint, "/mnt");
  EXPECT_EQ(parsed->entry_timeout.seconds, 1u);
  EXPECT_EQ(parsed->transport, TransportKind::kAuto);
  EXPECT_FALSE(parsed->read_only);
  EXPECT_FALSE(parsed->foreground);
}

TEST(DaemonOptions, MountOptionsInOneOrSeveralLists) {
  const absl::StatusOr<DaemonOptions> parsed =
      Parse({"-o", "allow_other,default_permissions,entry_timeout=2.5", "/src",
             "-oattr_timeout=3600,negative_timeout=0.001", "/mnt", "-o", "keep_cache,passthrough"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->allow_other);
  EXPECT_TRUE(parsed->default_permissions);
  EXPECT_EQ(parsed->entry_timeout.seconds, 2u);
  EXPECT_EQ(parsed->entry_timeout.nanoseconds, 500'000'000u);
  EXPECT_EQ(parsed->attr_timeout.seconds, 3600u);
  EXPECT_EQ(parsed->negative_timeout.seconds, 0u);
  EXPECT_EQ(parsed->negative_timeout.nanoseconds, 1'000'000u);
  EXPECT_TRUE(parsed->keep_cache);
  EXPECT_TRUE(parsed->passthrough);
}

// Found by the fuzzer: an empty argument was taken as the mountpoint.
TEST(DaemonOptions, AnEmptyPathIsRefusedByName) {
  EXPECT_THAT(ErrorOf({"/src", ""}), HasSubstr("MOUNTPOINT is an empty path"));
  EXPECT_THAT(ErrorOf({"", "/mnt"}), HasSubstr("SOURCE is an empty path"));
  EXPECT_THAT(ErrorOf({"--revisions", "", "/mnt"}), HasSubstr("REPO is an empty path"));
}

TEST(DaemonOptions, RequestTimeoutIsWholeSecondsTheKernelCanTake) {
  const absl::StatusOr<DaemonOptions> parsed = Parse({"-o", "request_timeout=30", "/src", "/mnt"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->request_timeout, 30);
  EXPECT_EQ(Parse({"/src", "/mnt"})->request_timeout, 0) << "no timeout unless asked";
  for (std::string_view bad :
       {"request_timeout=0", "request_timeout=65536", "request_timeout=1.5"}) {
    EXPECT_THAT(ErrorOf({"-o", bad, "/src", "/mnt"}),
                HasSubstr("-o request_timeout needs a whole number from 1 to 65535"));
  }
}

TEST(DaemonOptions, CacheOffZeroesEveryTimeout) {
  const absl::StatusOr<DaemonOptions> parsed =
      Parse({"-o", "entry_timeout=9,cache=off", "/src", "/mnt"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->cache);
  EXPECT_EQ(parsed->entry_timeout.seconds, 0u);
  EXPECT_EQ(parsed->attr_timeout.seconds, 0u);
}

TEST(DaemonOptions, RevisionsModeIsReadOnly) {
  const absl::StatusOr<DaemonOptions> parsed = Parse({"--revisions", "/repo", "/mnt", "-o", "rw"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->mode, Mode::kRevisions);
  EXPECT_EQ(parsed->source, "/repo");
  EXPECT_TRUE(parsed->read_only);
}

TEST(DaemonOptions, TransportQueueDepthAndThreadsInBothSpellings) {
  const absl::StatusOr<DaemonOptions> parsed =
      Parse({"--transport=uring-cmd", "--queue-depth", "16", "--threads=3", "/s", "/m"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->transport, TransportKind::kUringCmd);
  EXPECT_EQ(parsed->queue_depth, 16);
  EXPECT_EQ(parsed->threads, 3);
}

TEST(DaemonOptions, DebugImpliesForeground) {
  const absl::StatusOr<DaemonOptions> parsed = Parse({"-d", "/s", "/m"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->debug);
  EXPECT_TRUE(parsed->foreground);
}

TEST(DaemonOptions, HelpNeedsNothingElse) {
  const absl::StatusOr<DaemonOptions> parsed = Parse({"--help"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->help);
  EXPECT_THAT(Usage("ringfused"), HasSubstr("--revisions REPO MOUNTPOINT"));
}

TEST(DaemonOptions, BadInputIsRefusedWithAMessageThatNamesIt) {
  EXPECT_THAT(ErrorOf({"/s"}), HasSubstr("SOURCE MOUNTPOINT"));
  EXPECT_THAT(ErrorOf({"/s", "/m", "/extra"}), HasSubstr("SOURCE MOUNTPOINT"));
  EXPECT_THAT(ErrorOf({"--revisions", "/r"}), HasSubstr("--revisions REPO MOUNTPOINT"));
  EXPECT_THAT(ErrorOf({"-o", "frobnicate", "/s", "/m"}), HasSubstr("-o frobnicate"));
  EXPECT_THAT(ErrorOf({"-o", "entry_timeout=soon", "/s", "/m"}), HasSubstr("\"soon\""));
  EXPECT_THAT(ErrorOf({"-o", "entry_timeout=-1", "/s", "/m"}), HasSubstr("entry_timeout"));
  EXPECT_THAT(ErrorOf({"-o", "cache=maybe", "/s", "/m"}), HasSubstr("on or off"));
  EXPECT_THAT(ErrorOf({"--transport=fast", "/s", "/m"}), HasSubstr("unknown transport"));
  EXPECT_THAT(ErrorOf({"--queue-depth=0", "/s", "/m"}), HasSubstr("--queue-depth"));
  EXPECT_THAT(ErrorOf({"--threads", "/s", "/m"}), HasSubstr("--threads"));
  EXPECT_THAT(ErrorOf({"-x", "/s", "/m"}), HasSubstr("unknown option -x"));
  EXPECT_THAT(ErrorOf({"/s", "/m", "-o"}), HasSubstr("-o needs"));
  EXPECT_THAT(ErrorOf({"-o", "passthrough,writeback_cache", "/s", "/m"}),
              HasSubstr("cannot be combined"));
}

TEST(DaemonOptions, TraceTakesAFileButNotAlongsideDebug) {
  const absl::StatusOr<DaemonOptions> parsed = Parse({"--trace=/tmp/t.jsonl", "/s", "/m"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->trace, "/tmp/t.jsonl");
  EXPECT_EQ(Parse({"/s", "/m"})->trace, "") << "no trace unless asked";
  EXPECT_THAT(ErrorOf({"--trace=", "/s", "/m"}), HasSubstr("--trace needs a file name"));
  EXPECT_THAT(ErrorOf({"-d", "--trace", "t", "/s", "/m"}), HasSubstr("cannot be combined"));
}

}  // namespace
}  // namespace ringfuse::daemon
