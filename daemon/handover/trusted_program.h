// The program ringfuse-ctl restart starts runs with this daemon's credentials (root, usually),
// so it is opened at the request, run from that open file (SpawnOpenedWithSocket), and refused
// if anyone but root and this daemon's user could have put it there or could change it.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "base/fd.h"

namespace ringfuse::daemon {

// Opens `program` (an absolute path) with O_PATH, resolving it one name at a time from / as the
// kernel would, symbolic links included, and checking each step on the fd it opened: the file
// and every directory the resolution passes through (a link's target's too) must belong to root
// or this process's effective user and be writable by neither group nor others. A directory
// others may write is passed only with the sticky bit (/tmp), which keeps others from renaming
// or removing names they do not own: the name looked up there, a link included, must then be
// root's or this user's. The refusal names the path at fault and why.
absl::StatusOr<base::UniqueFd> OpenTrustedProgram(const std::string& program);

}  // namespace ringfuse::daemon
