// Whether a supplementary group the daemon does not know of could deny a caller access.
//
// The daemon acts with the caller's groups where it can read them (credentials.h CallerGroups).
// Where it cannot (a caller outside the connection's pid namespace, a daemon whose /proc counts
// pids in another one, a caller acting with borrowed credentials), acting with fewer groups is
// not always fewer rights: a member of a group that the mode's group bits, or an access ACL's
// group entry, grant less than "other" (a file root:banned 0604, an ACL group:banned:---) would
// be served as "other", with more. So such a caller is refused (EACCES) on an inode where that
// could happen: fail closed.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string_view>

namespace ringfuse::daemon {

// Whether, for the caller `uid` whose group set is known only to include `known` (its fsgid
// among them), some group it might be in besides would take from it a permission the inode
// `fd` grants it as "other". False for the inode's owner, and for a named user of its ACL (the
// user class decides before any group). True, failing closed, where the inode's mode or ACL
// cannot be read.
bool AGroupCouldDeny(int fd, uint32_t uid, std::span<const gid_t> known);

// The same decided on an access ACL's bytes (system.posix_acl_access, the kernel's xattr form)
// and the inode's owner and group: for the tests, and for AGroupCouldDeny.
bool AGroupCouldDeny(std::string_view acl, uid_t owner, gid_t group, mode_t mode, uint32_t uid,
                     std::span<const gid_t> known);

}  // namespace ringfuse::daemon
