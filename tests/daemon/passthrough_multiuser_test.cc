// Several users acting on the mount (allow_other), with and without default_permissions: the same
// scenario runs on a native directory and through the mount, and every outcome (errno of each
// step, owner and mode of each thing made) must be the same. The native run is the control;
// a few outcomes are also asserted outright, so that both cannot be wrong together.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "tests/daemon/passthrough_fixture.h"
#include "tests/daemon/test_users.h"

namespace ringfuse::daemon {
namespace {

using ::testing::IsSupersetOf;

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

// `ls -l`: lists `dir` and stats each name in it. 0 when there were names and every stat
// succeeded; else -1 with the first stat's errno, or ENODATA when no name was listed. System
// calls only (getdents64 into the stack, not opendir's heap): it runs in forked children.
int ListLong(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  alignas(8) char buffer[8192];
  int names = 0, error = 0;
  for (long got; (got = ::syscall(SYS_getdents64, fd, buffer, sizeof(buffer))) > 0;) {
    for (long at = 0; at < got;) {
      const auto* entry = reinterpret_cast<const dirent64*>(buffer + at);
      at += entry->d_reclen;
      if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
      ++names;
      struct stat st;
      if (::fstatat(fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 && error == 0) error = errno;
    }
  }
  ::close(fd);
  errno = names == 0 ? ENODATA : error;
  return errno == 0 ? 0 : -1;
}

// Root makes directory `path` with `mode` and group `gid`, and the file `path`/f in it.
int RootDirectoryWithFile(const std::string& path, mode_t mode, gid_t gid = 0) {
  return ::mkdir(path.c_str(), 0700) | ::chown(path.c_str(), 0, gid) | ::chmod(path.c_str(), mode) |
         Create(path + "/f");
}

// An access ACL in the kernel's xattr form (version 2, entries sorted by tag) for a 0755
// directory that takes everything from user `uid`.
std::string AclDenying(uid_t uid) {
  struct AclEntry {
    uint16_t tag, perm;
    uint32_t id;
  };
  constexpr uint32_t kVersion = 2, kNoId = ~0u;
  const AclEntry entries[] = {
      {0x01, 7, kNoId}, {0x02, 0, uid}, {0x04, 5, kNoId}, {0x10, 5, kNoId}, {0x20, 5, kNoId}};
  std::string value(reinterpret_cast<const char*>(&kVersion), sizeof(kVersion));
  value.append(reinterpret_cast<const char*>(entries), sizeof(entries));
  return value;
}

// Records each step's outcome as "what: ok" or "what: ERRNONAME".
class Outcomes {
 public:
  void Step(const std::string& what, int error) {
    const char* name = error > 0 ? strerrorname_np(error) : nullptr;
    list_.push_back(absl::StrFormat("%s: %s", what,
                                    error == 0 ? "ok"
                                    : name     ? name
                                               : std::to_string(error)));
  }
  // Root's own step, in this process: `result` is 0 or -1 with errno.
  void RootStep(const std::string& what, int result) { Step(what, result == 0 ? 0 : errno); }
  std::vector<std::string>& list() { return list_; }

 private:
  std::vector<std::string> list_;
};

// The scenario, on directory `base` (mode 0777, made by root); root's own steps run here.
std::vector<std::string> Scenario(const std::string& base) {
  Outcomes outcomes;
  const auto step = [&](const std::string& what, int error) { outcomes.Step(what, error); };
  // Root's own steps, in this process: 0 or errno.
  const auto root = [](int result) { return result == 0 ? 0 : errno; };
  const auto at = [&](const std::string& name) { return base + "/" + name; };

  step("alice mkdir a", As(kAlice, [&, p0 = at("a")] { return ::mkdir(p0.c_str(), 0755); }));
  step("alice creates a/f", As(kAlice, [&, p0 = at("a/f")] { return Create(p0); }));
  step("alice symlinks a/l",
       As(kAlice, [&, p0 = at("a/l")] { return ::symlink("f", p0.c_str()); }));
  step("alice mkfifo a/p", As(kAlice, [&, p0 = at("a/p")] { return ::mkfifo(p0.c_str(), 0600); }));
  step("alice mknod a/dev", As(kAlice, [&, p0 = at("a/dev")] {
         return ::mknod(p0.c_str(), S_IFCHR | 0600, makedev(1, 3));
       }));
  step("bob chmod a/f", As(kBob, [&, p0 = at("a/f")] { return ::chmod(p0.c_str(), 0777); }));
  step("bob chown a/f to bob",
       As(kBob, [&, p0 = at("a/f")] { return ::chown(p0.c_str(), 1102, 1102); }));
  step("alice chgrp a/f to her group",
       As(kAlice, [&, p0 = at("a/f")] { return ::chown(p0.c_str(), -1, kShared); }));
  step("alice chgrp a/f to bob's group",
       As(kAlice, [&, p0 = at("a/f")] { return ::chown(p0.c_str(), -1, 1102); }));
  step("alice chown a/f to bob",
       As(kAlice, [&, p0 = at("a/f")] { return ::chown(p0.c_str(), 1102, -1); }));
  step("alice chmod a/f 04755",
       As(kAlice, [&, p0 = at("a/f")] { return ::chmod(p0.c_str(), 04755); }));
  step("bob creates in a", As(kBob, [&, p0 = at("a/g")] { return Create(p0); }));
  step("bob writes a/f", As(kBob, [&, p0 = at("a/f")] { return OpenFor(p0, O_WRONLY); }));
  const timespec times[2] = {{1000, 0}, {2000, 0}};
  step("bob sets times of a/f",
       As(kBob, [&, p0 = at("a/f")] { return ::utimensat(AT_FDCWD, p0.c_str(), times, 0); }));
  step("alice sets times of a/f",
       As(kAlice, [&, p0 = at("a/f")] { return ::utimensat(AT_FDCWD, p0.c_str(), times, 0); }));

  // Sticky directory, as /tmp.
  step("root mkdir tmp",
       root(::mkdir(at("tmp").c_str(), 0777) | ::chmod(at("tmp").c_str(), 01777)));
  step("alice creates tmp/fa", As(kAlice, [&, p0 = at("tmp/fa")] { return Create(p0); }));
  step("bob unlinks tmp/fa", As(kBob, [&, p0 = at("tmp/fa")] { return ::unlink(p0.c_str()); }));
  step("bob renames tmp/fa", As(kBob, [&, p0 = at("tmp/fa"), p1 = at("tmp/fb")] {
         return ::rename(p0.c_str(), p1.c_str());
       }));
  step("alice unlinks tmp/fa", As(kAlice, [&, p0 = at("tmp/fa")] { return ::unlink(p0.c_str()); }));

  // Setgid directory: what is made in it gets its group, and directories keep the bit.
  step("root mkdir sg",
       root(::mkdir(at("sg").c_str(), 0775) | ::chown(at("sg").c_str(), 0, kShared) |
            ::chmod(at("sg").c_str(), 02775)));
  step("alice creates sg/f", As(kAlice, [&, p0 = at("sg/f")] { return Create(p0, 02755); }));
  step("alice mkdir sg/d", As(kAlice, [&, p0 = at("sg/d")] { return ::mkdir(p0.c_str(), 0755); }));
  step("bob creates sg/b", As(kBob, [&, p0 = at("sg/b")] { return Create(p0); }));

  // Group access through a supplementary group; set-group-ID dropped for a foreign group.
  step("root creates g", root(Create(at("g"), 0640) | ::chown(at("g").c_str(), 0, kShared)));
  step("alice reads g", As(kAlice, [&, p0 = at("g")] { return OpenFor(p0, O_RDONLY); }));
  step("bob reads g", As(kBob, [&, p0 = at("g")] { return OpenFor(p0, O_RDONLY); }));
  step("root creates a/h for alice, foreign group",
       root(Create(at("a/h")) | ::chown(at("a/h").c_str(), kAlice.uid, kForeign)));
  step("alice chmod a/h 02755",
       As(kAlice, [&, p0 = at("a/h")] { return ::chmod(p0.c_str(), 02755); }));

  for (const char* name : {"a", "a/f", "a/l", "a/p", "tmp/fa", "sg/f", "sg/d", "sg/b", "a/h"}) {
    outcomes.list().push_back(Owner(base, name));
  }
  return outcomes.list();
}

// Directories some users may not search (x), though they may write below them or list them.
// Without default_permissions the kernel checks no search permission: the daemon must, on each
// lookup, and the names root makes and lists through the mount first must not let others in.
std::vector<std::string> SearchScenario(const std::string& base) {
  Outcomes out;
  const auto at = [&](const std::string& name) { return base + "/" + name; };
  const auto read = [](const std::string& path) { return OpenFor(path, O_RDONLY); };
  const auto lstat = [](const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st);
  };

  out.RootStep("root makes hidden 0700 with f", RootDirectoryWithFile(at("hidden"), 0700));
  out.RootStep("root makes hidden/pub 0777 with f", RootDirectoryWithFile(at("hidden/pub"), 0777));
  out.RootStep("root reads hidden/f", read(at("hidden/f")));
  out.RootStep("root lists hidden -l", ListLong(at("hidden")));
  out.Step("bob reads hidden/f", As(kBob, [&, p0 = at("hidden/f")] { return read(p0); }));
  out.Step("bob stats hidden/f", As(kBob, [&, p0 = at("hidden/f")] { return lstat(p0); }));
  out.Step("bob stats hidden/missing",
           As(kBob, [&, p0 = at("hidden/missing")] { return lstat(p0); }));
  out.Step("bob stats hidden", As(kBob, [&, p0 = at("hidden")] { return lstat(p0); }));
  out.Step("bob lists hidden", As(kBob, [&, p0 = at("hidden")] { return ListLong(p0); }));
  out.Step("bob creates hidden/pub/b",
           As(kBob, [&, p0 = at("hidden/pub/b")] { return Create(p0); }));
  out.Step("bob mkdir hidden/pub/d",
           As(kBob, [&, p0 = at("hidden/pub/d")] { return ::mkdir(p0.c_str(), 0755); }));
  out.Step("bob creates b", As(kBob, [&, p0 = at("b")] { return Create(p0); }));
  out.Step("bob renames b into hidden/pub", As(kBob, [&, p0 = at("b"), p1 = at("hidden/pub/b")] {
             return ::rename(p0.c_str(), p1.c_str());
           }));
  out.Step("bob renames hidden/pub/f out", As(kBob, [&, p0 = at("hidden/pub/f"), p1 = at("f")] {
             return ::rename(p0.c_str(), p1.c_str());
           }));

  // Readable by all, searchable by root only: names without attributes, as for `ls -l`.
  out.RootStep("root makes listable 0744 with f", RootDirectoryWithFile(at("listable"), 0744));
  out.RootStep("root lists listable -l", ListLong(at("listable")));
  out.Step("bob lists listable -l", As(kBob, [&, p0 = at("listable")] { return ListLong(p0); }));
  out.Step("bob reads listable/f", As(kBob, [&, p0 = at("listable/f")] { return read(p0); }));

  // Searchable through a supplementary group only: alice's, not bob's.
  out.RootStep("root makes grp 0750 in alice's group with f",
               RootDirectoryWithFile(at("grp"), 0750, kShared));
  out.Step("alice reads grp/f", As(kAlice, [&, p0 = at("grp/f")] { return read(p0); }));
  out.Step("alice lists grp -l", As(kAlice, [&, p0 = at("grp")] { return ListLong(p0); }));
  out.Step("bob reads grp/f", As(kBob, [&, p0 = at("grp/f")] { return read(p0); }));
  return out.list();
}

// A 0755 directory whose ACL takes search from bob: the mode alone would let him in. The ACL
// comes before f: a name cached while everyone could search stays cached for its entry timeout
// when search is taken away afterwards (not covered here).
std::vector<std::string> AclScenario(const std::string& base) {
  Outcomes out;
  const std::string acl = AclDenying(kBob.uid);
  const std::string dir = base + "/acl";
  const std::string file = dir + "/f";
  out.RootStep("root makes acl 0755, denying bob",
               ::mkdir(dir.c_str(), 0755) |
                   ::setxattr(dir.c_str(), "system.posix_acl_access", acl.data(), acl.size(), 0));
  out.RootStep("root creates acl/f", Create(file));
  out.Step("alice reads acl/f", As(kAlice, [&] { return OpenFor(file, O_RDONLY); }));
  out.Step("bob reads acl/f", As(kBob, [&] { return OpenFor(file, O_RDONLY); }));
  return out.list();
}

// One user whose threads hold different supplementary groups: the thread group leader is in
// one group, a second thread (by a raw setgroups of its own) in another only. Each thread's
// rights are its own: a directory writable by the second thread's group lets that thread in and
// not the leader, and the leader's group grants the second thread nothing. The daemon must not
// take the groups of the process (its leader) for those of the calling thread.
constexpr gid_t kLeaderOnly = 2201, kThreadOnly = 2202;
const User kLeader{1101, 1101, {1101, kLeaderOnly}};
const User kThread{1101, 1101, {1101, kThreadOnly}};

// Root makes directory `path` 0770 with the file `path`/f 0660, both in group `gid` only.
int RootGroupDirectory(const std::string& path, gid_t gid) {
  const std::string file = path + "/f";
  return RootDirectoryWithFile(path, 0770, gid) | ::chown(file.c_str(), 0, gid) |
         ::chmod(file.c_str(), 0660);
}

std::vector<std::string> ThreadGroupsScenario(const std::string& base) {
  Outcomes out;
  const auto at = [&](const std::string& name) { return base + "/" + name; };
  const auto in_thread = [](const std::function<int()>& step) {
    return AsThreadBeside(kLeader, kThread, false, step);
  };
  const auto in_leader = [](const std::function<int()>& step) {
    return AsThreadBeside(kLeader, kThread, true, step);
  };
  out.RootStep("root makes tg in the thread's group", RootGroupDirectory(at("tg"), kThreadOnly));
  out.RootStep("root makes lg in the leader's group", RootGroupDirectory(at("lg"), kLeaderOnly));
  out.Step("thread writes tg/f", in_thread([&, p0 = at("tg/f")] { return OpenFor(p0, O_WRONLY); }));
  out.Step("thread writes lg/f", in_thread([&, p0 = at("lg/f")] { return OpenFor(p0, O_WRONLY); }));
  out.Step("thread creates tg/t", in_thread([&, p0 = at("tg/t")] { return Create(p0); }));
  out.Step("thread creates lg/t", in_thread([&, p0 = at("lg/t")] { return Create(p0); }));
  out.Step("thread mkdir tg/d",
           in_thread([&, p0 = at("tg/d")] { return ::mkdir(p0.c_str(), 0755); }));
  out.Step("leader writes lg/f", in_leader([&, p0 = at("lg/f")] { return OpenFor(p0, O_WRONLY); }));
  out.Step("leader writes tg/f", in_leader([&, p0 = at("tg/f")] { return OpenFor(p0, O_WRONLY); }));
  out.Step("leader creates tg/u", in_leader([&, p0 = at("tg/u")] { return Create(p0); }));
  out.Step("thread unlinks tg/t", in_thread([&, p0 = at("tg/t")] { return ::unlink(p0.c_str()); }));
  out.Step("thread unlinks lg/f", in_thread([&, p0 = at("lg/f")] { return ::unlink(p0.c_str()); }));
  out.list().push_back(Owner(base, "tg/d"));
  return out.list();
}

using ScenarioFn = std::vector<std::string> (*)(const std::string& base);

class PassthroughMultiUser : public PassthroughMountTest {
 protected:
  // Runs `scenario` natively and through the mount, expects the same outcomes, and returns the
  // native ones (the control).
  std::vector<std::string> RunBoth(bool default_permissions, ScenarioFn scenario) {
    EXPECT_EQ(::chmod(top_.path().c_str(), 0755), 0);
    const std::string native = top_.path() + "/native";
    EXPECT_EQ(::mkdir(native.c_str(), 0777), 0);
    EXPECT_EQ(::chmod(native.c_str(), 0777), 0);
    DaemonOptions options;
    options.mount.allow_other = true;
    options.mount.default_permissions = default_permissions;
    Mount(options);
    if (HasFatalFailure()) return {};
    const std::string mounted = Mounted("m");
    EXPECT_EQ(::mkdir(mounted.c_str(), 0777), 0) << std::strerror(errno);
    EXPECT_EQ(::chmod(mounted.c_str(), 0777), 0);

    const std::vector<std::string> expected = scenario(native);
    const std::vector<std::string> through_mount = scenario(mounted);
    EXPECT_EQ(through_mount, expected);
    return expected;
  }
};

// What the controls themselves must show: the rules at work, so that both runs cannot be wrong
// together.
const std::vector<std::string> kRulesAtWork = {
    "bob chmod a/f: EPERM",      "alice chgrp a/f to her group: ok",
    "bob unlinks tmp/fa: EPERM", "alice reads g: ok",
    "bob reads g: EACCES",       "a/f: 1101:2100 4755",
    "sg/d: 1101:2100 2755"};
const std::vector<std::string> kSearchRulesAtWork = {
    "root lists hidden -l: ok",         "bob reads hidden/f: EACCES",    "bob stats hidden: ok",
    "bob creates hidden/pub/b: EACCES", "bob lists listable -l: EACCES", "alice reads grp/f: ok",
    "bob reads grp/f: EACCES"};

const std::vector<std::string> kThreadGroupRulesAtWork = {
    "thread writes tg/f: ok",      "thread writes lg/f: EACCES", "thread creates tg/t: ok",
    "thread creates lg/t: EACCES", "leader writes lg/f: ok",     "leader writes tg/f: EACCES",
    "thread unlinks tg/t: ok",     "tg/d: 1101:1101 755"};

TEST_P(PassthroughMultiUser, WithDefaultPermissionsLikeANativeDirectory) {
  EXPECT_THAT(RunBoth(true, Scenario), IsSupersetOf(kRulesAtWork));
}

TEST_P(PassthroughMultiUser, WithoutDefaultPermissionsLikeANativeDirectory) {
  EXPECT_THAT(RunBoth(false, Scenario), IsSupersetOf(kRulesAtWork));
}

TEST_P(PassthroughMultiUser, WithDefaultPermissionsNoOneWalksWhereTheyMayNotSearch) {
  EXPECT_THAT(RunBoth(true, SearchScenario), IsSupersetOf(kSearchRulesAtWork));
}

TEST_P(PassthroughMultiUser, WithoutDefaultPermissionsNoOneWalksWhereTheyMayNotSearch) {
  EXPECT_THAT(RunBoth(false, SearchScenario), IsSupersetOf(kSearchRulesAtWork));
}

// With default_permissions the kernel checks ACLs only when FUSE_POSIX_ACL is agreed, which the
// daemon does not ask for: it checks the mode, and the daemon must see the ACL, in a LOOKUP and
// by keeping names under such a directory out of the kernel's cache (root's create put acl/f
// there, which bob would walk unchecked).
TEST_P(PassthroughMultiUser, WithDefaultPermissionsAnAclTakesSearchAway) {
  EXPECT_THAT(RunBoth(true, AclScenario),
              IsSupersetOf({"alice reads acl/f: ok", "bob reads acl/f: EACCES"}));
}

TEST_P(PassthroughMultiUser, WithoutDefaultPermissionsAnAclTakesSearchAway) {
  EXPECT_THAT(RunBoth(false, AclScenario),
              IsSupersetOf({"alice reads acl/f: ok", "bob reads acl/f: EACCES"}));
}

TEST_P(PassthroughMultiUser, WithDefaultPermissionsEachThreadActsWithItsOwnGroups) {
  EXPECT_THAT(RunBoth(true, ThreadGroupsScenario), IsSupersetOf(kThreadGroupRulesAtWork));
}

TEST_P(PassthroughMultiUser, WithoutDefaultPermissionsEachThreadActsWithItsOwnGroups) {
  EXPECT_THAT(RunBoth(false, ThreadGroupsScenario), IsSupersetOf(kThreadGroupRulesAtWork));
}

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughMultiUser, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
