// Whom a caller's use of a shared bound is charged to: lock waits and lock owners' opens are
// capped per user, and a cap per uid is no cap for a user with many uids. A rootless container
// maps a range of subordinate uids (/etc/subuid) into a user namespace its user owns; each of
// them is a distinct uid in the requests, and 4 of them would take all of the daemon's lock
// waits. So a caller in a user namespace below the daemon's is charged to the user who owns the
// topmost namespace of its chain below the daemon's (NS_GET_OWNER_UID): every uid a user can
// become without privilege counts as that user.
#pragma once

#include <cstdint>

#include "ringfuse/handler.h"

namespace ringfuse::daemon {

// A uid (below 2^32), or kUnplacedCallers.
using Account = uint64_t;

// Callers the daemon cannot place share one account, so that they get one user's share between
// them, not one each: a request with pid 0 (a caller in a pid namespace that is no descendant
// of the daemon's, or the kernel's own), a /proc that names other tasks than requests do, or a
// task whose user namespace the daemon may not read. Fewer rights than their own, never more.
inline constexpr Account kUnplacedCallers = Account{1} << 32;

// The account of the request's caller: its uid where it is in the daemon's own user namespace,
// else the owner of its namespace's topmost ancestor below the daemon's. The caller's thread
// waits for the answer, so the pid names it while this reads /proc/<pid>/ns/user.
Account AccountOf(const RequestContext& context);

}  // namespace ringfuse::daemon
