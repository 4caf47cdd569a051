// What a kept ringfused (ringfuse/keeper.h) keeps where its crash cannot reach, and how the daemon
// the keeper starts next takes it back: the one place that knows the journals and the order of a
// recovery.
//
// In passthrough mode, where clients write, the daemon keeps three journals, each in a memfd the
// keeper holds too: its open files and directories (open_file_journal.h), its nodes
// (node_journal.h) and the changes not to be made twice (change_journal.h). Revisions are
// read-only and keep none: a crash there looks every name up again.
//
// The keeper gives the memfds back in no promised order, beside any other fd, and each is known by
// its memfd's name (kMemfdName of its class). The name is the journal's format: format 1 of each
// is the plain name, and a journal whose layout changes takes a new one ("ringfused-nodes.2"), so
// that a daemon never reads a layout it does not know as one it does; a journal it does not know
// is closed, and recovered from as if absent.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "base/fd.h"
#include "daemon/crash/change_journal.h"
#include "daemon/crash/node_journal.h"
#include "daemon/crash/open_file_journal.h"
#include "daemon/fs/passthrough_fs.h"
#include "ringfuse/keeper.h"

namespace ringfuse::daemon {

class KeptState {
 public:
  // Creates the three journals, which `fs` records in from now on, and returns their memfds for
  // Session::StartKept's `kept_fds`, for the keeper to hold (they stay this object's).
  absl::StatusOr<std::vector<int>> Journal(PassthroughFs& fs);

  // The daemon started after a crash, before the first request: node ids and fh values of this
  // incarnation's own, then, if this daemon journals (Journal was called), the dead daemon's
  // journals adopted from `crash.fds` in this order: its changes (answers to requests resent),
  // its nodes (the inode table, under their ids) and its open files (reopened under their fh).
  // DataLoss when the nodes or open files are missing or unreadable; a missing change journal
  // (a keeper an older ringfused started) only costs changes made twice, and says so.
  absl::StatusOr<Recovered> Recover(const CrashRecovery& crash, PassthroughFs& fs);

 private:
  // The steps of Recover, in its order, each adopting one of the dead daemon's journals.
  absl::Status AdoptChanges(base::UniqueFd fd, const PassthroughFs::Parts& parts);
  struct NodesAdopted {
    size_t recorded;  // nodes the journal held
    bool complete;    // every node the dead daemon had (NodeJournal::Recovery)
  };
  absl::StatusOr<NodesAdopted> AdoptNodes(base::UniqueFd fd, const PassthroughFs::Parts& parts);
  // Returns how many open files were reopened.
  absl::StatusOr<size_t> AdoptOpenFiles(base::UniqueFd fd, const PassthroughFs::Parts& parts);

  std::unique_ptr<OpenFileJournal> open_files_;
  std::unique_ptr<NodeJournal> nodes_;
  std::unique_ptr<ChangeJournal> changes_;
};

}  // namespace ringfuse::daemon
