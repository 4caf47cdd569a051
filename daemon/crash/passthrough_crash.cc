// The passthrough filesystem after a crash of a kept daemon (ringfuse/keeper.h): node ids and fh
// values of this incarnation's own, and the dead daemon's open files reopened
// (reopen_after_crash.h).
#include "absl/strings/str_format.h"
#include "daemon/crash/reopen_after_crash.h"
#include "daemon/fs/passthrough_fs.h"

namespace ringfuse::daemon {

absl::Status PassthroughFs::ContinueAfterCrash(uint32_t incarnation) {
  if (incarnation >= (uint32_t{1} << (64 - kIncarnationShift))) {
    return absl::OutOfRangeError(absl::StrFormat(
        "incarnation %u: ringfused has no node ids left that no earlier one gave out; unmount "
        "and mount again",
        incarnation));
  }
  const uint64_t first = uint64_t{incarnation} << kIncarnationShift;
  inodes_.GiveNodeIdsFrom(first);
  open_.ContinueAfterCrash(first);
  return absl::OkStatus();
}

size_t PassthroughFs::ReopenAfterCrash(OpenFileJournal& journal) {
  return daemon::ReopenAfterCrash(journal, inodes_, open_);
}

}  // namespace ringfuse::daemon
