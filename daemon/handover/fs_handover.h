// The passthrough filesystem's part of a handover (handover_state.h): its open files and
// directories, the lock owners' opens and the shared backing ids, beside the inode table
// (InodeTable::Save and Restore, inode_table_handover.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "base/fd.h"
#include "daemon/fs/backing_ids.h"
#include "daemon/fs/passthrough_fs.h"
#include "daemon/inodes/inode_table.h"
#include "daemon/locks/owner_locks.h"

namespace ringfuse::daemon {

// The filesystem as a handover carries it. Fds as in SavedTable: in SaveFs the filesystem's own
// (they stay open here), in RestoreFs indices into the fds given.
struct SavedFs {
  struct File {
    uint64_t fh;
    int fd;
    int flags;  // the backing open's
    bool passthrough;
    bool direct;  // has an O_DIRECT twin, opened again on the way in
  };
  struct Dir {
    uint64_t fh;
    int fd;
  };
  SavedTable table;
  std::vector<File> files;
  std::vector<Dir> dirs;
  std::vector<OwnerLocks::Saved> owner_opens;
  std::vector<BackingIds::Saved> backing_ids;
};

// Runs with no request in progress.
SavedFs SaveFs(PassthroughFs& fs);
// Before the first request, with the filesystem's backing files bound to the connection taken
// over. Takes the fds it uses out of `fds`; InvalidArgument for a record that does not hold
// together (an fh twice, an fd not carried), after which the filesystem is to be thrown away.
absl::Status RestoreFs(PassthroughFs& fs, const SavedFs& saved, std::vector<base::UniqueFd>& fds);

}  // namespace ringfuse::daemon
