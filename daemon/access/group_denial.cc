#include "daemon/access/group_denial.h"

#include <sys/stat.h>
#include <sys/xattr.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "daemon/fs/backing.h"

namespace ringfuse::daemon {
namespace {

// The kernel's xattr form of an ACL (include/uapi/linux/posix_acl_xattr.h): a version, then
// entries of tag, permissions and id, little-endian.
constexpr uint32_t kAclVersion = 2;
constexpr uint16_t kUser = 0x02, kGroupObj = 0x04, kGroup = 0x08, kMask = 0x10, kOther = 0x20;
constexpr size_t kHeaderSize = 4, kEntrySize = 8;

// An ACL of a few dozen entries is the most anyone writes; a longer one fails closed.
constexpr size_t kAclBytesRead = 4096;

struct AclEntry {
  uint16_t tag;
  uint16_t perm;
  uint32_t id;
};

AclEntry EntryAt(std::string_view acl, size_t index) {
  AclEntry entry;
  const char* at = acl.data() + kHeaderSize + index * kEntrySize;
  std::memcpy(&entry.tag, at, 2);
  std::memcpy(&entry.perm, at + 2, 2);
  std::memcpy(&entry.id, at + 4, 4);
  return entry;
}

bool Knows(std::span<const gid_t> known, gid_t group) {
  return std::find(known.begin(), known.end(), group) != known.end();
}

// Without an ACL: the owning group's bits against the other bits.
bool ModeGroupCouldDeny(gid_t group, mode_t mode, std::span<const gid_t> known) {
  const mode_t group_bits = (mode >> 3) & 7, other_bits = mode & 7;
  return !Knows(known, group) && (other_bits & ~group_bits) != 0;
}

}  // namespace

bool AGroupCouldDeny(std::string_view acl, uid_t owner, gid_t group, mode_t mode, uint32_t uid,
                     std::span<const gid_t> known) {
  if (owner == uid) return false;
  if (acl.empty()) return ModeGroupCouldDeny(group, mode, known);
  uint32_t version;
  if (acl.size() < kHeaderSize || (acl.size() - kHeaderSize) % kEntrySize != 0) return true;
  std::memcpy(&version, acl.data(), sizeof(version));
  if (version != kAclVersion) return true;
  const size_t count = (acl.size() - kHeaderSize) / kEntrySize;
  uint16_t mask = 7, other = 0;
  bool in_group_class = false;
  for (size_t i = 0; i < count; ++i) {
    const AclEntry entry = EntryAt(acl, i);
    if (entry.tag == kUser && entry.id == uid) return false;
    if (entry.tag == kMask) mask = entry.perm;
    if (entry.tag == kOther) other = entry.perm;
    if ((entry.tag == kGroupObj && Knows(known, group)) ||
        (entry.tag == kGroup && Knows(known, entry.id))) {
      in_group_class = true;  // more groups could only add to what the group class grants
    }
  }
  if (in_group_class) return false;
  for (size_t i = 0; i < count; ++i) {
    const AclEntry entry = EntryAt(acl, i);
    if ((entry.tag == kGroupObj || entry.tag == kGroup) && (other & ~(entry.perm & mask) & 7)) {
      return true;
    }
  }
  return false;
}

bool AGroupCouldDeny(int fd, uint32_t uid, std::span<const gid_t> known) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return true;
  if (st.st_uid == uid) return false;
  char acl[kAclBytesRead];
  // Through /proc: getxattrat refuses an O_PATH fd of anything but a directory. The cost (a
  // path walk) is paid only by callers whose groups are not all known.
  const ssize_t size =
      ::getxattr(ProcPath(fd).c_str(), "system.posix_acl_access", acl, sizeof(acl));
  if (size < 0 && errno != ENODATA && errno != EOPNOTSUPP) return true;
  const std::string_view bytes(acl, size < 0 ? 0 : static_cast<size_t>(size));
  return AGroupCouldDeny(bytes, st.st_uid, st.st_gid, st.st_mode, uid, known);
}

}  // namespace ringfuse::daemon
