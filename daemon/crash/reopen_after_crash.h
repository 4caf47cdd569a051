// After a crash of a kept daemon (ringfuse/keeper.h): the open files and directories the dead
// daemon's journal (open_file_journal.h) names, reopened under their fh values, so that the
// kernel's opens go on.
#pragma once

#include <cstddef>

#include "daemon/crash/open_file_journal.h"
#include "daemon/fs/open_handles.h"
#include "daemon/inodes/inode_table.h"

namespace ringfuse::daemon {

// Reopens into `open` what `journal` recorded, each on its node of `inodes` (recovered from the
// node journal first); returns how many. One whose inode cannot be reopened (gone, or on a
// filesystem without handles), or whose fh is this daemon's own, stays lost: EBADF, and its
// record is dropped.
size_t ReopenAfterCrash(OpenFileJournal& journal, InodeTable& inodes, OpenHandles& open);

}  // namespace ringfuse::daemon
