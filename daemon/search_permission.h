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
// LOOKUP and on every cached step, so none of this applies. Without allow_other only the mounting
// user (the daemon's, root) reaches the mount, and root callers are never checked: as with
// ActAsCaller, uid 0 keeps CAP_DAC_READ_SEARCH. Either way the check costs a comparison.
#pragma once

#include "daemon/options.h"
#include "ringfuse/handler.h"

namespace ringfuse::daemon {

// Whether every user may search directory `dir_fd` (an O_PATH fd or an open one): x for owner,
// group and others, and no access ACL, which might take it from a named user or group.
bool EveryoneMaySearch(int dir_fd);

// 0 when the request's caller may search directory `dir_fd`, else the errno (EACCES). Decided
// from the directory's mode where that settles it (a root caller, the owner with x, everyone
// with x), else by the kernel on the backing directory as the caller, supplementary groups and
// ACLs included.
int CallerMaySearch(const RequestContext& context, int dir_fd);

// Whether the kernel lets other users than the one who looked a name up walk it unchecked, so
// that names under a directory not everyone may search must not stay cached.
inline bool KernelSharesUncheckedNames(const DaemonOptions& options) {
  return options.allow_other && !options.default_permissions;
}

}  // namespace ringfuse::daemon
