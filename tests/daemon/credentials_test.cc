// What the kernel does to a thread's capabilities when its fsuid changes, that ActAsCaller
// changes only the calling thread, empties its effective capabilities for the call, and refuses
// where a switch did not take.
#include "daemon/access/credentials.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>

#include "base/fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/child_process.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

// This thread's effective capabilities, from /proc/thread-self/status.
uint64_t EffectiveCapabilities() {
  std::ifstream status("/proc/thread-self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("CapEff:")) return std::stoull(line.substr(7), nullptr, 16);
  }
  return 0;
}

constexpr uint64_t Bit(int capability) { return uint64_t{1} << capability; }

// CAP_CHOWN 0, DAC_OVERRIDE 1, DAC_READ_SEARCH 2, FOWNER 3, FSETID 4, LINUX_IMMUTABLE 9,
// MKNOD 27, MAC_OVERRIDE 32.
constexpr uint64_t kFsCapabilities =
    Bit(0) | Bit(1) | Bit(2) | Bit(3) | Bit(4) | Bit(9) | Bit(27) | Bit(32);
constexpr uint64_t kSysAdmin = Bit(21);
constexpr uint64_t kSetuid = Bit(7);

// Calls made as a caller with no pid (so no /proc lookup) and no extensions.
class AsCaller : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  }
  RequestContext Caller(uint32_t uid) {
    header_.uid = uid;
    header_.gid = 1002;
    return RequestContext{header_, extensions_};
  }

 private:
  wire::InHeader header_{};
  Extensions extensions_;
};

TEST(Credentials, ParsesProcStatus) {
  const std::optional<ProcessIds> ids = ParseProcStatus(
      "Name:\tx\nUid:\t1\t2\t3\t1001\nGid:\t4\t5\t6\t1002\nGroups:\t10 20 1002 \nCapEff:\t0\n");
  ASSERT_TRUE(ids.has_value());
  EXPECT_EQ(ids->fsuid, 1001u);
  EXPECT_EQ(ids->fsgid, 1002u);
  EXPECT_EQ(ids->groups, (std::vector<gid_t>{10, 20, 1002}));
  EXPECT_FALSE(ParseProcStatus("Uid:\t1\t2\t3\t4\n").has_value());
  EXPECT_TRUE(ParseProcStatus("Uid:\t0 0 0 0\nGid:\t0 0 0 0\nGroups:\n")->groups.empty());
}

TEST(Credentials, TellsWhetherProcCountsPidsInTheReadersNamespace) {
  EXPECT_TRUE(CountsInOwnPidNamespace("Tgid:\t7\nNSpid:\t7\nNSpgid:\t7\n"));
  EXPECT_FALSE(CountsInOwnPidNamespace("NSpid:\t4711\t7\n")) << "a namespace below /proc's";
  EXPECT_FALSE(CountsInOwnPidNamespace("Tgid:\t7\n")) << "unknown: assume not";
}

std::string SelfStatus() {
  std::ifstream file("/proc/self/status");
  std::ostringstream text;
  text << file.rdbuf();
  return std::move(text).str();
}

// The kernel's side of it: a process in a pid namespace of its own that still sees the /proc of
// the one above is told so by that /proc.
TEST(Credentials, ProcOfTheNamespaceAboveCountsOtherwise) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  EXPECT_TRUE(CountsInOwnPidNamespace(SelfStatus()));
  const int in_new_namespace = RunInChild([] {
    if (::unshare(CLONE_NEWPID) != 0) return 200;
    return RunInChild([] { return CountsInOwnPidNamespace(SelfStatus()) ? 1 : 0; });
  });
  EXPECT_EQ(in_new_namespace, 0);
}

// The request's pid is a thread id; the groups are that thread's own, not its leader's. The
// second thread takes the request's fsuid and fsgid and a group of its own by raw syscalls (its
// credentials only); the leader keeps root's.
TEST(Credentials, TheGroupsAreTheCallingThreadsOwn) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  const gid_t thread_group = 4243;
  std::promise<pid_t> ready;
  std::promise<void> done;
  std::thread caller([&] {
    const bool set = ::syscall(SYS_setgroups, 1, &thread_group) == 0 &&
                     ::syscall(SYS_setfsgid, 1002) >= 0 && ::syscall(SYS_setfsuid, 1001) >= 0;
    ready.set_value(set ? static_cast<pid_t>(::syscall(SYS_gettid)) : -1);
    done.get_future().wait();
  });
  const pid_t tid = ready.get_future().get();
  ASSERT_GT(tid, 0);
  wire::InHeader header{};
  header.uid = 1001;
  header.gid = 1002;
  header.pid = static_cast<uint32_t>(tid);
  const Extensions extensions;
  const CallerGroupSet own = CallerGroups(RequestContext{header, extensions});
  EXPECT_EQ(own.groups, std::vector<gid_t>{thread_group});
  EXPECT_TRUE(own.complete);
  header.pid = static_cast<uint32_t>(::getpid());
  const CallerGroupSet leaders = CallerGroups(RequestContext{header, extensions});
  EXPECT_EQ(leaders.groups, std::vector<gid_t>{})
      << "the leader's fsuid is not the request's: none of its groups";
  EXPECT_FALSE(leaders.complete) << "nor are they known";
  header.pid = static_cast<uint32_t>(tid);
  header.uid = 1003;
  const CallerGroupSet borrowed = CallerGroups(RequestContext{header, extensions});
  EXPECT_EQ(borrowed.groups, std::vector<gid_t>{})
      << "a thread whose fsuid is not the request's lends nothing";
  EXPECT_FALSE(borrowed.complete);
  done.set_value();
  caller.join();
}

TEST(Credentials, ANonZeroFsuidDropsExactlyTheFilesystemCapabilities) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  const uint64_t before = EffectiveCapabilities();
  ASSERT_EQ(before & kFsCapabilities, kFsCapabilities);
  std::thread([&] {
    ::syscall(SYS_setfsuid, 1001);
    const uint64_t as_user = EffectiveCapabilities();
    EXPECT_EQ(as_user & kFsCapabilities, 0u);
    EXPECT_EQ(as_user | kFsCapabilities, before) << "no other capability moves";
    EXPECT_NE(as_user & kSysAdmin, 0u);
    ::syscall(SYS_setfsuid, 0);
    EXPECT_EQ(EffectiveCapabilities(), before) << "fsuid 0 raises them again";
  }).join();
}

TEST(Credentials, ActAsCallerChangesOnlyItsOwnThread) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  const std::vector<gid_t> main_groups = ThreadGroups();
  const uint64_t main_capabilities = EffectiveCapabilities();
  wire::InHeader header{};
  header.uid = 1001;
  header.gid = 1002;
  header.pid = 0;  // no /proc lookup: the groups come from the extension only
  const uint32_t extension_groups[] = {3000};
  Extensions extensions;
  extensions.supp_groups = RecordArray<uint32_t>(
      ConstBytes(reinterpret_cast<const std::byte*>(extension_groups), sizeof(extension_groups)),
      1);
  const RequestContext context{header, extensions};
  std::promise<void> acting, checked;
  std::thread worker([&] {
    {
      ActAsCaller caller(context, 077);
      EXPECT_EQ(::syscall(SYS_setfsuid, -1), 1001);
      EXPECT_EQ(::syscall(SYS_setfsgid, -1), 1002);
      EXPECT_EQ(ThreadGroups(), std::vector<gid_t>{3000});
      EXPECT_EQ(EffectiveCapabilities(), 0u) << "not only the filesystem capabilities";
      EXPECT_EQ(::umask(077), 077u);
      acting.set_value();
      checked.get_future().wait();
    }
    EXPECT_EQ(::syscall(SYS_setfsuid, -1), 0);
    EXPECT_EQ(::syscall(SYS_setfsgid, -1), 0);
    EXPECT_EQ(ThreadGroups(), main_groups);
    EXPECT_EQ(EffectiveCapabilities(), main_capabilities);
  });
  acting.get_future().wait();
  EXPECT_EQ(ThreadGroups(), main_groups) << "the other threads keep their groups";
  EXPECT_EQ(EffectiveCapabilities(), main_capabilities);
  EXPECT_EQ(::syscall(SYS_setfsuid, -1), 0);
  checked.set_value();
  worker.join();
}

// CAP_FSETID where the kernel says the caller has it, and nothing else.
TEST_F(AsCaller, KeepsOnlyTheCapabilityAskedFor) {
  const RequestContext context = Caller(1001);
  std::thread([&] {
    const uint64_t before = EffectiveCapabilities();
    uint64_t inside = ~0ull;
    EXPECT_EQ(CallAsCaller(
                  context, 0,
                  [&] {
                    inside = EffectiveCapabilities();
                    return base::Errno();
                  },
                  kCapabilityFsetid),
              base::Errno());
    EXPECT_EQ(inside, kCapabilityFsetid);
    EXPECT_EQ(EffectiveCapabilities(), before);
  }).join();
}

// The kernel's writeback names no writer: made as the file's owner, root's included, with no
// groups and only the capabilities asked for (CAP_SYS_RESOURCE gone: reserved blocks, quotas).
TEST_F(AsCaller, AFilesOwnerIsActedAsWithOnlyWhatIsKept) {
  const base::UniqueFd file(::memfd_create("owned", MFD_CLOEXEC));
  ASSERT_TRUE(file.valid());
  ASSERT_EQ(::fchown(file.get(), 1003, 1004), 0);
  std::thread([&] {
    const uint64_t before = EffectiveCapabilities();
    const std::vector<gid_t> groups_before = ThreadGroups();
    long fsuid = -2, fsgid = -2;
    uint64_t inside = ~0ull;
    std::vector<gid_t> groups_inside = {1};
    EXPECT_EQ(CallAsOwnerOf(
                  file.get(),
                  [&] {
                    fsuid = ::syscall(SYS_setfsuid, -1);
                    fsgid = ::syscall(SYS_setfsgid, -1);
                    inside = EffectiveCapabilities();
                    groups_inside = ThreadGroups();
                    return base::Errno();
                  },
                  kCapabilityFsetid),
              base::Errno());
    EXPECT_EQ(fsuid, 1003);
    EXPECT_EQ(fsgid, 1004);
    EXPECT_EQ(inside, kCapabilityFsetid);
    EXPECT_THAT(groups_inside, ::testing::IsEmpty());
    EXPECT_EQ(EffectiveCapabilities(), before);
    EXPECT_EQ(ThreadGroups(), groups_before);
    EXPECT_EQ(::syscall(SYS_setfsuid, -1), 0);
  }).join();
}

// Root's file too: its writeback keeps fsuid 0 (the owner's), not root's capabilities.
TEST_F(AsCaller, ARootOwnedFileIsActedAsWithoutRootsCapabilities) {
  const base::UniqueFd file(::memfd_create("owned", MFD_CLOEXEC));
  ASSERT_TRUE(file.valid());
  std::thread([&] {
    uint64_t inside = ~0ull;
    EXPECT_EQ(CallAsOwnerOf(
                  file.get(),
                  [&] {
                    inside = EffectiveCapabilities();
                    return base::Errno();
                  },
                  kSysAdmin),
              base::Errno());
    EXPECT_EQ(inside, kSysAdmin);
  }).join();
}

// A caller with pid 0 (outside the connection's pid namespace): its groups are unknown, and a
// group it may be in could take from it what "other" grants on root:2100 0604. Refused with
// EACCES, before anything is switched; where no group could deny (0644), served.
TEST_F(AsCaller, AGroupThatCouldDenyRefusesACallerWhoseGroupsAreUnknown) {
  ringfuse::testing::TempDir dir("ringfuse-unknown-groups");
  const std::string banned = dir.path() + "/banned", plain = dir.path() + "/plain";
  const base::UniqueFd banned_fd(::open(banned.c_str(), O_CREAT | O_RDONLY | O_CLOEXEC, 0604));
  const base::UniqueFd plain_fd(::open(plain.c_str(), O_CREAT | O_RDONLY | O_CLOEXEC, 0644));
  ASSERT_TRUE(banned_fd.valid() && plain_fd.valid());
  ASSERT_EQ(::fchown(banned_fd.get(), 0, 2100), 0);
  ASSERT_EQ(::fchmod(banned_fd.get(), 0604), 0);
  ASSERT_EQ(::fchmod(plain_fd.get(), 0644), 0);
  const RequestContext context = Caller(1001);
  std::thread([&] {
    int calls = 0;
    const auto call = [&] {
      ++calls;
      return base::Errno();
    };
    EXPECT_EQ(CallAsCaller(context, kCreatesNothing, call, 0, {plain_fd.get(), banned_fd.get()}),
              base::Errno(EACCES));
    EXPECT_EQ(calls, 0);
    EXPECT_EQ(CallAsCaller(context, kCreatesNothing, call, 0, {plain_fd.get(), -1}), base::Errno());
    EXPECT_EQ(CallAsCaller(context, kCreatesNothing, call, 0, {}), base::Errno())
        << "nothing decided on";
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(::syscall(SYS_setfsuid, -1), 0);
  }).join();
}

// FUSE_INVALID_UIDGID ((uint32_t)-1, a caller the mount's idmap cannot name): setfsuid(-1)
// changes nothing, and without the read back the call would be made as root.
TEST_F(AsCaller, AnIdThatDoesNotTakeRefusesTheCall) {
  const RequestContext context = Caller(~0u);
  std::thread([&] {
    bool called = false;
    EXPECT_EQ(CallAsCaller(context, 0,
                           [&] {
                             called = true;
                             return base::Errno();
                           }),
              base::Errno(EPERM));
    EXPECT_FALSE(called);
    EXPECT_EQ(::syscall(SYS_setfsuid, -1), 0) << "restored";
  }).join();
}

// A thread that cannot change its fsuid (CAP_SETUID not effective): refused, not made as root.
TEST_F(AsCaller, ASwitchThatFailsRefusesTheCall) {
  const RequestContext context = Caller(1001);
  std::thread([&] {
    std::optional<Capabilities> own = ThreadCapabilities();
    ASSERT_TRUE(own.has_value());
    Capabilities without_setuid = *own;
    without_setuid.effective &= ~kSetuid;
    ASSERT_TRUE(SetThreadCapabilities(without_setuid));
    ActAsCaller caller(context);
    EXPECT_FALSE(caller.ok());
    EXPECT_EQ(::syscall(SYS_setfsuid, -1), 0);
  }).join();
}

// More groups than setgroups takes (NGROUPS_MAX, 65536): the thread gets none, never keeps
// its own (the daemon's), which could reach what the caller cannot.
TEST(Credentials, GroupsThatCannotBeSetLeaveNoneRatherThanTheDaemons) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  std::vector<uint32_t> too_many(65537);
  for (uint32_t i = 0; i < too_many.size(); ++i) too_many[i] = 10000 + i;
  wire::InHeader header{};
  header.uid = 1001;
  header.gid = 1002;
  Extensions extensions;
  extensions.supp_groups = RecordArray<uint32_t>(
      ConstBytes(reinterpret_cast<const std::byte*>(too_many.data()), too_many.size() * 4),
      static_cast<uint32_t>(too_many.size()));
  const RequestContext context{header, extensions};
  std::thread([&] {
    const gid_t daemon_group = 4242;
    ASSERT_EQ(::syscall(SYS_setgroups, 1, &daemon_group), 0);
    ActAsCaller caller(context);
    EXPECT_TRUE(caller.ok());
    EXPECT_EQ(::syscall(SYS_setfsuid, -1), 1001);
    EXPECT_EQ(ThreadGroups(), std::vector<gid_t>{});
  }).join();
}

}  // namespace
}  // namespace ringfuse::daemon
