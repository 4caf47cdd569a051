// Which inodes a caller whose groups are not all known is refused on: where a group it might be
// in could take from it what "other" grants (daemon/access/group_denial.h).
#include "daemon/access/group_denial.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "base/fd.h"
#include "gtest/gtest.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

constexpr uint32_t kAlice = 1101;
constexpr gid_t kOwnGroup = 1101, kBanned = 2100, kFriends = 2200;
const std::vector<gid_t> kOnlyOwn = {kOwnGroup};
const std::vector<gid_t> kOwnAndBanned = {kOwnGroup, kBanned};
const std::vector<gid_t> kOwnFriendsAndBanned = {kOwnGroup, kFriends, kBanned};

using ringfuse::testing::AclDenyingGroup;
using ringfuse::testing::AclXattr;
constexpr uint16_t kUserObj = ringfuse::testing::kAclUserObj, kUser = ringfuse::testing::kAclUser,
                   kGroupObj = ringfuse::testing::kAclGroupObj,
                   kGroup = ringfuse::testing::kAclGroup, kMask = ringfuse::testing::kAclMask,
                   kOther = ringfuse::testing::kAclOther;
constexpr uint32_t kNoId = ringfuse::testing::kAclNoId;

TEST(AGroupCouldDeny, ModeGroupBitsBelowOthersDenyAnOutsider) {
  EXPECT_TRUE(AGroupCouldDeny("", 0, kBanned, 0604, kAlice, kOnlyOwn)) << "root:banned 0604";
  EXPECT_FALSE(AGroupCouldDeny("", 0, 0, 0644, kAlice, kOnlyOwn)) << "group as much as others";
  EXPECT_FALSE(AGroupCouldDeny("", 0, kBanned, 0640, kAlice, kOnlyOwn)) << "others get nothing";
  EXPECT_FALSE(AGroupCouldDeny("", 0, kBanned, 0604, kAlice, kOwnAndBanned))
      << "known to be in the group: the group class applies already";
  EXPECT_FALSE(AGroupCouldDeny("", kAlice, kBanned, 0604, kAlice, kOnlyOwn)) << "the owner";
}

TEST(AGroupCouldDeny, AnAclGroupEntryBelowOthersDeniesAnOutsider) {
  const std::string banned = AclDenyingGroup(kBanned);
  EXPECT_TRUE(AGroupCouldDeny(banned, 0, 0, 0644, kAlice, kOnlyOwn));
  EXPECT_FALSE(AGroupCouldDeny(banned, 0, 0, 0644, kAlice, kOwnFriendsAndBanned));
  const std::string named_alice = AclXattr({{kUserObj, 6, kNoId},
                                            {kUser, 4, kAlice},
                                            {kGroupObj, 4, kNoId},
                                            {kGroup, 0, kBanned},
                                            {kMask, 4, kNoId},
                                            {kOther, 4, kNoId}});
  EXPECT_FALSE(AGroupCouldDeny(named_alice, 0, 0, 0644, kAlice, kOnlyOwn))
      << "a named user's entry decides before any group's";
  const std::string masked = AclXattr({{kUserObj, 6, kNoId},
                                       {kGroupObj, 6, kNoId},
                                       {kGroup, 6, kFriends},
                                       {kMask, 0, kNoId},
                                       {kOther, 4, kNoId}});
  EXPECT_TRUE(AGroupCouldDeny(masked, 0, 0, 0604, kAlice, kOnlyOwn))
      << "the mask takes from every group entry";
  const std::string generous = AclXattr({{kUserObj, 6, kNoId},
                                         {kGroupObj, 6, kNoId},
                                         {kGroup, 6, kFriends},
                                         {kMask, 6, kNoId},
                                         {kOther, 4, kNoId}});
  EXPECT_FALSE(AGroupCouldDeny(generous, 0, 0, 0664, kAlice, kOnlyOwn));
}

TEST(AGroupCouldDeny, AnAclItCannotReadFailsClosed) {
  EXPECT_TRUE(AGroupCouldDeny(std::string("\x02\0\0\0\x01", 5), 0, 0, 0644, kAlice, kOnlyOwn));
  EXPECT_TRUE(AGroupCouldDeny(AclXattr({}).replace(0, 1, "\x03"), 0, 0, 0644, kAlice, kOnlyOwn));
}

// On real inodes, through an O_PATH fd as the daemon holds them.
TEST(AGroupCouldDeny, ReadsTheModeAndAclOfAnInode) {
  ringfuse::testing::TempDir dir("ringfuse-group-denial");
  const std::string plain = dir.path() + "/plain", banned = dir.path() + "/banned";
  for (const std::string& path : {plain, banned}) {
    const base::UniqueFd made(::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
    ASSERT_TRUE(made.valid());
    ASSERT_EQ(::fchmod(made.get(), 0644), 0);
  }
  const std::string acl = AclDenyingGroup(kBanned);
  if (::setxattr(banned.c_str(), "system.posix_acl_access", acl.data(), acl.size(), 0) != 0) {
    GTEST_SKIP() << "no ACLs here: " << std::strerror(errno);
  }
  const base::UniqueFd plain_fd(::open(plain.c_str(), O_PATH | O_CLOEXEC));
  const base::UniqueFd banned_fd(::open(banned.c_str(), O_PATH | O_CLOEXEC));
  EXPECT_FALSE(AGroupCouldDeny(plain_fd.get(), kAlice, kOnlyOwn));
  EXPECT_TRUE(AGroupCouldDeny(banned_fd.get(), kAlice, kOnlyOwn));
  EXPECT_TRUE(AGroupCouldDeny(-1, kAlice, kOnlyOwn)) << "an inode it cannot read fails closed";
}

}  // namespace
}  // namespace ringfuse::daemon
