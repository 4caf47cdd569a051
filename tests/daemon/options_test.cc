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
  EXPECT_EQ(parsed->mount.mountpoint, "/mnt");
  EXPECT_EQ(parsed->entry_timeout.seconds, 1u);
  EXPECT_EQ(parsed->transport, TransportKind::kAuto);
  EXPECT_FALSE(parsed->mount.read_only);
  EXPECT_FALSE(parsed->foreground);
}

TEST(DaemonOptions, MountOptionsInOneOrSeveralLists) {
  const absl::StatusOr<DaemonOptions> parsed =
      Parse({"-o", "allow_other,default_permissions,entry_timeout=2.5", "/src",
             "-oattr_timeout=3600,negative_timeout=0.001", "/mnt", "-o", "keep_cache,passthrough"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->mount.allow_other);
  EXPECT_TRUE(parsed->mount.default_permissions);
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
  EXPECT_TRUE(parsed->mount.read_only);
}

TEST(DaemonOptions, TransportQueueDepthAndThreadsInBothSpellings) {
  const absl::StatusOr<DaemonOptions> parsed =
      Parse({"--transport=uring-cmd", "--queue-depth", "16", "--threads=3", "/s", "/m"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->transport, TransportKind::kUringCmd);
  EXPECT_EQ(parsed->transport_options.queue_depth, 16);
  EXPECT_EQ(parsed->transport_options.workers, 3);
}

TEST(DaemonOptions, TakeoverFdIsASocketNumberAndMountsNothingByDefault) {
  EXPECT_EQ(Parse({"/s", "/m"})->takeover_fd, -1);
  const absl::StatusOr<DaemonOptions> parsed = Parse({"/s", "/m", "--takeover-fd=7"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->takeover_fd, 7);
  EXPECT_THAT(ErrorOf({"--takeover-fd=-1", "/s", "/m"}), HasSubstr("file descriptor number"));
  EXPECT_THAT(ErrorOf({"--takeover-fd=x", "/s", "/m"}), HasSubstr("\"x\""));
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

// mount(8) runs mount.fuse3, which runs `ringfused SOURCE MOUNTPOINT -o OPTIONS` (seen: "-o
// rw,allow_other,dev,suid" for `mount -t fuse.ringfused SRC MNT -o allow_other` as root).
TEST(DaemonOptions, TakesTheArgumentsMountFuse3Passes) {
  const absl::StatusOr<DaemonOptions> parsed =
      Parse({"/src", "/mnt", "-o", "rw,allow_other,dev,suid"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->source, "/src");
  EXPECT_EQ(parsed->mount.mountpoint, "/mnt");
  EXPECT_TRUE(parsed->mount.allow_other);
  EXPECT_FALSE(parsed->mount.read_only);
  EXPECT_FALSE(parsed->mount.flags.nodev);
  EXPECT_FALSE(parsed->mount.flags.nosuid);
}

TEST(DaemonOptions, OptionsMayFollowThePathsAndDoubleDashEndsThem) {
  const absl::StatusOr<DaemonOptions> parsed = Parse({"/s", "/m", "-f", "--threads=2"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->foreground);
  EXPECT_EQ(parsed->transport_options.workers, 2);
  ::setenv("POSIXLY_CORRECT", "1", 1);  // would stop getopt's scan at the first path
  const absl::StatusOr<DaemonOptions> posix = Parse({"/s", "/m", "-o", "ro"});
  ::unsetenv("POSIXLY_CORRECT");
  ASSERT_TRUE(posix.ok()) << posix.status();
  EXPECT_TRUE(posix->mount.read_only);
  EXPECT_EQ(posix->mount.mountpoint, "/m");
  const absl::StatusOr<DaemonOptions> dashed = Parse({"-f", "--", "-s", "/m"});
  ASSERT_TRUE(dashed.ok()) << dashed.status();
  EXPECT_EQ(dashed->source, "-s");
}

TEST(DaemonOptions, GenericMountOptionsBecomeMountFlags) {
  const absl::StatusOr<DaemonOptions> defaults = Parse({"/s", "/m"});
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_TRUE(defaults->mount.flags.nosuid) << "FUSE's defaults";
  EXPECT_TRUE(defaults->mount.flags.nodev);
  EXPECT_FALSE(defaults->mount.flags.noexec);
  EXPECT_EQ(defaults->mount.flags.atime, AtimeUpdate::kRelative);

  const absl::StatusOr<DaemonOptions> parsed =
      Parse({"-o", "ro,nosuid,nodev,noexec,nodiratime,lazytime,noatime", "/s", "/m"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->mount.read_only);
  EXPECT_TRUE(parsed->mount.flags.noexec);
  EXPECT_TRUE(parsed->mount.flags.nodiratime);
  EXPECT_TRUE(parsed->mount.flags.lazytime);
  EXPECT_EQ(parsed->mount.flags.atime, AtimeUpdate::kNever);

  for (auto [option, atime] :
       {std::pair{"strictatime", AtimeUpdate::kEvery}, std::pair{"norelatime", AtimeUpdate::kEvery},
        std::pair{"noatime,atime", AtimeUpdate::kRelative},
        std::pair{"strictatime,nostrictatime", AtimeUpdate::kRelative},
        std::pair{"noatime,relatime", AtimeUpdate::kRelative}}) {
    const absl::StatusOr<DaemonOptions> one = Parse({"-o", option, "/s", "/m"});
    ASSERT_TRUE(one.ok()) << option << ": " << one.status();
    EXPECT_EQ(one->mount.flags.atime, atime) << option;
  }
  const absl::StatusOr<DaemonOptions> undone =
      Parse({"-o", "noexec,exec,lazytime,nolazytime,nodiratime,diratime", "/s", "/m"});
  ASSERT_TRUE(undone.ok()) << undone.status();
  EXPECT_FALSE(undone->mount.flags.noexec);
  EXPECT_FALSE(undone->mount.flags.lazytime);
  EXPECT_FALSE(undone->mount.flags.nodiratime);
}

// fstab's options about when and by whom to mount, and notes for other programs, reach the daemon
// when mount.fuse3 is run by hand or passes them on (defaults, x-*, comment=).
TEST(DaemonOptions, MountsOwnOptionsAreAcceptedAndChangeNothing) {
  const absl::StatusOr<DaemonOptions> plain = Parse({"/s", "/m"});
  const absl::StatusOr<DaemonOptions> parsed =
      Parse({"-o",
             "defaults,auto,noauto,_netdev,nofail,user,nouser,users,owner,group,"
             "x-systemd.automount,x-note=1,comment=backup",
             "/s", "/m"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->mount.read_only, plain->mount.read_only);
  EXPECT_EQ(parsed->mount.flags.nosuid, plain->mount.flags.nosuid);
  EXPECT_EQ(parsed->mount.flags.nodev, plain->mount.flags.nodev);
  EXPECT_EQ(parsed->mount.allow_other, plain->mount.allow_other);
}

TEST(DaemonOptions, FsnameSubtypeAutoUnmountAndSyncInit) {
  const absl::StatusOr<DaemonOptions> defaults = Parse({"/s", "/m"});
  EXPECT_EQ(defaults->mount.fsname, "");
  EXPECT_EQ(defaults->mount.subtype, "ringfused");
  EXPECT_FALSE(defaults->mount.auto_unmount);
  EXPECT_FALSE(defaults->mount.sync_init);
  const absl::StatusOr<DaemonOptions> parsed =
      Parse({"-o", "fsname=data,subtype=backup,auto_unmount", "/s", "/m"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->mount.fsname, "data");
  EXPECT_EQ(parsed->mount.subtype, "backup");
  EXPECT_TRUE(parsed->mount.auto_unmount);
  EXPECT_TRUE(Parse({"-o", "sync_init", "/s", "/m"})->mount.sync_init);
  EXPECT_THAT(ErrorOf({"-o", "fsname=", "/s", "/m"}), HasSubstr("-o fsname needs a name"));
  EXPECT_THAT(ErrorOf({"-o", "sync_init,auto_unmount", "/s", "/m"}),
              HasSubstr("cannot be combined"));
}

TEST(DaemonOptions, UnknownMountOptionsAreRefusedByName) {
  EXPECT_THAT(ErrorOf({"/s", "/m", "-o", "rw,nosuid,frobnicate"}),
              HasSubstr("unknown option -o frobnicate"));
  EXPECT_THAT(ErrorOf({"/s", "/m", "-o", "size=3"}), HasSubstr("unknown option -o size=3"));
  EXPECT_THAT(ErrorOf({"--revisions=yes", "/r", "/m"}), HasSubstr("--revisions takes no value"));
  EXPECT_THAT(ErrorOf({"/s", "/m", "--threads"}), HasSubstr("--threads needs a value"));
  EXPECT_THAT(ErrorOf({"/s", "/dev/fd/3", "-o", "rw"}), HasSubstr("drop_privileges"));
}

}  // namespace
}  // namespace ringfuse::daemon
