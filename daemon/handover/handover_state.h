// What ringfused hands to its successor at a restart (ringfuse-ctl restart): everything the
// kernel refers to by number, so that no client sees a difference.
//
// - The inode table: every node id with its lookup count, its backing inode (dev, ino, type),
//   the file handle or the name it is reopened by, and the fds of the nodes open now (the root,
//   and those only FORGET may close). Cached dentries stay valid; nothing answers ESTALE.
// - Open files and directories under the same fh values, with their fds (same open file
//   description: offset, flags, flock locks), and the per-owner opens that hold POSIX locks.
// - Kernel passthrough backing ids, which the connection keeps across the handover.
// - In revisions mode, the revision served and the names tracked since the last publish.
//
// The record is versioned and checked field by field on the way in: a successor given a record
// it cannot read refuses the takeover, and the running daemon serves on.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "daemon/fs/passthrough_fs.h"
#include "ringfuse/handover.h"

namespace ringfuse::daemon {

// Called with no request in progress (Session::HandOver's save). `revision`: the revision
// served, "" in passthrough mode. The payload's fds stay open in `fs` (the old daemon exits
// after a handover; until then it may serve on if the takeover fails).
absl::StatusOr<HandoverPayload> SaveHandoverState(PassthroughFs& fs, const std::string& revision);

// Restores into `fs`, made for the same options and serving nothing yet (Session::TakeOver's
// restore): takes ownership of the payload's fds, even on error. Returns the revision saved.
absl::StatusOr<std::string> RestoreHandoverState(HandoverPayload payload, PassthroughFs& fs);

}  // namespace ringfuse::daemon
