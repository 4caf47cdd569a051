// What the kernel does to a thread's capabilities when its fsuid changes, and that ActAsCaller
// changes only the calling thread.
#include "daemon/credentials.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <future>
#include <string>
#include <thread>

#include "gtest/gtest.h"

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
  abi::InHeader header{};
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
      EXPECT_EQ(EffectiveCapabilities() & kFsCapabilities, 0u);
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

// More groups than setgroups takes (NGROUPS_MAX, 65536): the thread gets none, never keeps
// its own (the daemon's), which could reach what the caller cannot.
TEST(Credentials, GroupsThatCannotBeSetLeaveNoneRatherThanTheDaemons) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  std::vector<uint32_t> too_many(65537);
  for (uint32_t i = 0; i < too_many.size(); ++i) too_many[i] = 10000 + i;
  abi::InHeader header{};
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
