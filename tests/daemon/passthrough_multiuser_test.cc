// Several users acting on the mount (allow_other), with and without default_permissions: the same
// scenario runs on a native directory and through the mount, and every outcome (errno of each
// step, owner and mode of each thing made) must be the same. The native run is the control;
// a few outcomes are also asserted outright, so that both cannot be wrong together.
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "tests/daemon/child_process.h"
#include "tests/daemon/passthrough_fixture.h"

namespace ringfuse::daemon {
namespace {

using ::testing::Contains;

struct User {
  uid_t uid;
  gid_t gid;
  std::vector<gid_t> groups;
};

constexpr gid_t kShared = 2100;   // alice's supplementary group
constexpr gid_t kForeign = 3100;  // nobody's
const User kAlice{1101, 1101, {1101, kShared}};
const User kBob{1102, 1102, {1102}};

// Runs `step` as `user` in a child; returns its errno, 0 for success.
int As(const User& user, const std::function<int()>& step) {
  return RunInChild([&] {
    if (::setgroups(user.groups.size(), user.groups.data()) != 0 || ::setgid(user.gid) != 0 ||
        ::setuid(user.uid) != 0) {
      return 200;
    }
    ::umask(022);
    return step() == 0 ? 0 : errno;
  });
}

int Create(const std::string& path, mode_t mode = 0644) {
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, mode);
  return fd < 0 ? -1 : ::close(fd);
}

int OpenFor(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  return fd < 0 ? -1 : ::close(fd);
}

std::string Owner(const std::string& base, const std::string& name) {
  struct stat st {};
  if (::lstat((base + "/" + name).c_str(), &st) != 0) return name + ": missing";
  return absl::StrFormat("%s: %u:%u %o", name, st.st_uid, st.st_gid,
                         S_ISLNK(st.st_mode) ? 0 : st.st_mode & 07777);
}

// The scenario, on directory `base` (mode 0777, made by root); root's own steps run here.
std::vector<std::string> Scenario(const std::string& base) {
  std::vector<std::string> outcomes;
  auto step = [&](const std::string& what, int error) {
    const char* name = error > 0 ? strerrorname_np(error) : nullptr;
    outcomes.push_back(absl::StrFormat("%s: %s", what,
                                       error == 0 ? "ok"
                                       : name     ? name
                                                  : std::to_string(error)));
  };
  // Root's own steps, in this process: 0 or errno.
  const auto root = [](int result) { return result == 0 ? 0 : errno; };
  const auto at = [&](const std::string& name) { return base + "/" + name; };

  step("alice mkdir a", As(kAlice, [&] { return ::mkdir(at("a").c_str(), 0755); }));
  step("alice creates a/f", As(kAlice, [&] { return Create(at("a/f")); }));
  step("alice symlinks a/l", As(kAlice, [&] { return ::symlink("f", at("a/l").c_str()); }));
  step("alice mkfifo a/p", As(kAlice, [&] { return ::mkfifo(at("a/p").c_str(), 0600); }));
  step("alice mknod a/dev",
       As(kAlice, [&] { return ::mknod(at("a/dev").c_str(), S_IFCHR | 0600, makedev(1, 3)); }));
  step("bob chmod a/f", As(kBob, [&] { return ::chmod(at("a/f").c_str(), 0777); }));
  step("bob chown a/f to bob", As(kBob, [&] { return ::chown(at("a/f").c_str(), 1102, 1102); }));
  step("alice chgrp a/f to her group",
       As(kAlice, [&] { return ::chown(at("a/f").c_str(), -1, kShared); }));
  step("alice chgrp a/f to bob's group",
       As(kAlice, [&] { return ::chown(at("a/f").c_str(), -1, 1102); }));
  step("alice chown a/f to bob", As(kAlice, [&] { return ::chown(at("a/f").c_str(), 1102, -1); }));
  step("alice chmod a/f 04755", As(kAlice, [&] { return ::chmod(at("a/f").c_str(), 04755); }));
  step("bob creates in a", As(kBob, [&] { return Create(at("a/g")); }));
  step("bob writes a/f", As(kBob, [&] { return OpenFor(at("a/f"), O_WRONLY); }));
  const timespec times[2] = {{1000, 0}, {2000, 0}};
  step("bob sets times of a/f",
       As(kBob, [&] { return ::utimensat(AT_FDCWD, at("a/f").c_str(), times, 0); }));
  step("alice sets times of a/f",
       As(kAlice, [&] { return ::utimensat(AT_FDCWD, at("a/f").c_str(), times, 0); }));

  // Sticky directory, as /tmp.
  step("root mkdir tmp",
       root(::mkdir(at("tmp").c_str(), 0777) | ::chmod(at("tmp").c_str(), 01777)));
  step("alice creates tmp/fa", As(kAlice, [&] { return Create(at("tmp/fa")); }));
  step("bob unlinks tmp/fa", As(kBob, [&] { return ::unlink(at("tmp/fa").c_str()); }));
  step("bob renames tmp/fa",
       As(kBob, [&] { return ::rename(at("tmp/fa").c_str(), at("tmp/fb").c_str()); }));
  step("alice unlinks tmp/fa", As(kAlice, [&] { return ::unlink(at("tmp/fa").c_str()); }));

  // Setgid directory: what is made in it gets its group, and directories keep the bit.
  step("root mkdir sg",
       root(::mkdir(at("sg").c_str(), 0775) | ::chown(at("sg").c_str(), 0, kShared) |
            ::chmod(at("sg").c_str(), 02775)));
  step("alice creates sg/f", As(kAlice, [&] { return Create(at("sg/f"), 02755); }));
  step("alice mkdir sg/d", As(kAlice, [&] { return ::mkdir(at("sg/d").c_str(), 0755); }));
  step("bob creates sg/b", As(kBob, [&] { return Create(at("sg/b")); }));

  // Group access through a supplementary group; set-group-ID dropped for a foreign group.
  step("root creates g", root(Create(at("g"), 0640) | ::chown(at("g").c_str(), 0, kShared)));
  step("alice reads g", As(kAlice, [&] { return OpenFor(at("g"), O_RDONLY); }));
  step("bob reads g", As(kBob, [&] { return OpenFor(at("g"), O_RDONLY); }));
  step("root creates a/h for alice, foreign group",
       root(Create(at("a/h")) | ::chown(at("a/h").c_str(), kAlice.uid, kForeign)));
  step("alice chmod a/h 02755", As(kAlice, [&] { return ::chmod(at("a/h").c_str(), 02755); }));

  for (const char* name : {"a", "a/f", "a/l", "a/p", "tmp/fa", "sg/f", "sg/d", "sg/b", "a/h"}) {
    outcomes.push_back(Owner(base, name));
  }
  return outcomes;
}

class PassthroughMultiUser : public PassthroughMountTest {
 protected:
  void RunBoth(bool default_permissions) {
    ASSERT_EQ(::chmod(top_.c_str(), 0755), 0);
    const std::string native = top_ + "/native";
    ASSERT_EQ(::mkdir(native.c_str(), 0777), 0);
    ASSERT_EQ(::chmod(native.c_str(), 0777), 0);
    DaemonOptions options;
    options.allow_other = true;
    options.default_permissions = default_permissions;
    ASSERT_NO_FATAL_FAILURE(Mount(options));
    const std::string mounted = Mounted("m");
    ASSERT_EQ(::mkdir(mounted.c_str(), 0777), 0) << std::strerror(errno);
    ASSERT_EQ(::chmod(mounted.c_str(), 0777), 0);

    const std::vector<std::string> expected = Scenario(native);
    const std::vector<std::string> through_mount = Scenario(mounted);
    EXPECT_EQ(through_mount, expected);

    // The control itself shows the rules at work.
    EXPECT_THAT(expected, Contains("bob chmod a/f: EPERM"));
    EXPECT_THAT(expected, Contains("alice chgrp a/f to her group: ok"));
    EXPECT_THAT(expected, Contains("bob unlinks tmp/fa: EPERM"));
    EXPECT_THAT(expected, Contains("alice reads g: ok"));
    EXPECT_THAT(expected, Contains("bob reads g: EACCES"));
    EXPECT_THAT(expected, Contains("a/f: 1101:2100 4755"));
    EXPECT_THAT(expected, Contains("sg/d: 1101:2100 2755"));
  }
};

TEST_P(PassthroughMultiUser, WithDefaultPermissionsLikeANativeDirectory) { RunBoth(true); }

TEST_P(PassthroughMultiUser, WithoutDefaultPermissionsLikeANativeDirectory) { RunBoth(false); }

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughMultiUser, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
