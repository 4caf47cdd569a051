// Search (x) permission on backing directories, where the kernel leaves it to the daemon.
//
// Without default_permissions the kernel checks no directory's search permission on a path walk:
// it sends LOOKUP for a name it has not cached, as the walking caller, and walks a cached name
// for anyone. The daemon resolves names as root, so it checks the caller's search right on the
// parent before it answers a LOOKUP. And where other users share the mount (allow_other), a name
// under a directory that not everyone may search is handed to the kernel with no entry timeout
// (and readdirplus does not look such names up): every walk through it then comes back as a
// LOOKUP of the walking caller, checked again, instead of reusing what another user looked up.
//
// With default_permissions the kernel checks the parent's search permission itself before a
// LOOKUP and on every cached step, but from the mode alone: the daemon does not negotiate
// FUSE_POSIX_ACL, so the kernel never reads an ACL (fs/fuse/acl.c), and an ACL entry that takes
// search from a user or group (group:banned:---) would not stop them. So there the same applies
// to directories that may have an access ACL. Without allow_other only the mounting user (the
// daemon's, root) reaches the mount, and root callers are never checked: as with ActAsCaller,
// uid 0 keeps CAP_DAC_READ_SEARCH.
#pragma once

#include "base/errno.h"
#include "daemon/options.h"
#include "ringfuse/handler.h"

namespace ringfuse::daemon {

// Whether every user may search directory `dir_fd` (an O_PATH fd or an open one): x for owner,
// group and others, and no access ACL, which might take it from a named user or group.
bool EveryoneMaySearch(int dir_fd);

// No error when the request's caller may search directory `dir_fd`, else the error (EACCES).
// Decided from the directory's mode where that settles it (a root caller, the owner with x,
// everyone with x), else by the kernel on the backing directory as the caller, supplementary groups
// and ACLs included.
base::Errno CallerMaySearch(const RequestContext& context, int dir_fd);

// Whether the kernel checks every user's walk through directory `dir_fd` as natively, without
// the daemon: then the names under it may stay cached for all, and a LOOKUP there need not check
// the caller again. Only the mounting user walks without allow_other; with default_permissions
// the kernel checks the mode, which is all there is without an ACL; without it, nothing, and
// only a directory everyone may search is safe to share.
bool KernelChecksWalksThrough(const DaemonOptions& options, int dir_fd);

}  // namespace ringfuse::daemon
