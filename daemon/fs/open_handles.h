// The files and directories the kernel holds open through the daemon, by the fh each was given
// (handle_registry.h), with what a kept daemon adds to them (ringfuse/keeper.h): every open and
// release recorded in its journal (open_file_journal.h), and, after a crash, the rules for an fh
// the dead daemon gave out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "daemon/crash/open_file_journal.h"
#include "daemon/fs/dir_handle.h"
#include "daemon/fs/file_handle.h"
#include "daemon/fs/handle_registry.h"
#include "ringfuse/reply.h"

namespace ringfuse::daemon {

class OpenHandles {
 public:
  // Records every open and release in `journal` from now on (null: none). Set before serving.
  void KeepIn(OpenFileJournal* journal) { journal_ = journal; }
  bool journaled() const { return journal_ != nullptr; }

  // OPEN, CREATE, TMPFILE and OPENDIR: the fh given to `handle`, open on node `nodeid`, whose
  // inode `inode_handle` names (InodeHandles::HandleOf; asked for only where journaled()).
  uint64_t AddFile(std::unique_ptr<FileHandle> handle, uint64_t nodeid,
                   std::string_view inode_handle, int flags);
  uint64_t AddDir(std::unique_ptr<DirHandle> handle, uint64_t nodeid,
                  std::string_view inode_handle);
  // The handle `fh` names; null for none, which a request answers EBADF.
  std::shared_ptr<FileHandle> File(uint64_t fh) const { return files_.Find(fh); }
  std::shared_ptr<DirHandle> Dir(uint64_t fh) const { return dirs_.Find(fh); }
  // RELEASE and RELEASEDIR: the handle taken back, freed when the last request using it is done;
  // null for an fh found nowhere (FinishUnknown answers it).
  std::shared_ptr<FileHandle> ReleaseFile(uint64_t fh);
  std::shared_ptr<DirHandle> ReleaseDir(uint64_t fh);
  size_t size() const { return files_.size() + dirs_.size(); }

  // A kept daemon started again after a crash: fh values above `last_dead` are its own; one at
  // or below it was the dead daemon's.
  void ContinueAfterCrash(uint64_t last_dead);
  bool DeadDaemons(uint64_t fh) const { return fh < first_own_fh_; }
  // The FLUSH or RELEASE of an fh found nowhere: EBADF for one of this daemon's own, success for
  // a dead daemon's, whose file is closed already.
  void FinishUnknown(uint64_t fh, EmptyReply& reply) const;
  // A dead daemon's open file of node `nodeid`, reopened after the crash under its fh (a directory
  // is restored as a handover's is, RestoreDir); false if that fh is held.
  bool RestoreFileAfterCrash(uint64_t fh, uint64_t nodeid, std::unique_ptr<FileHandle> handle);
  // The fh of a file of node `nodeid` reopened after the crash: what fstat of such a file needs,
  // the node being the dead daemon's.
  std::optional<uint64_t> ReopenedFileOf(uint64_t nodeid) const;

  // A handover (or a crash), with no request in progress: `visit(fh, handle)` for each handle
  // held, and each held again under the fh the previous daemon gave it (false if that fh is held
  // twice, or 0).
  template <typename Visit>
  void ForEachFile(Visit visit) const {
    files_.ForEach(visit);
  }
  template <typename Visit>
  void ForEachDir(Visit visit) const {
    dirs_.ForEach(visit);
  }
  bool RestoreFile(uint64_t fh, std::unique_ptr<FileHandle> handle) {
    return files_.Restore(fh, std::move(handle));
  }
  bool RestoreDir(uint64_t fh, std::unique_ptr<DirHandle> handle) {
    return dirs_.Restore(fh, std::move(handle));
  }

 private:
  HandleRegistry<FileHandle> files_;
  HandleRegistry<DirHandle> dirs_;
  OpenFileJournal* journal_ = nullptr;  // set once, before serving
  uint64_t first_own_fh_ = 0;           // set once, before serving; 0: no crash, all are own
  // Written before serving, then only read.
  absl::flat_hash_map<uint64_t, uint64_t> reopened_fh_of_node_;
};

}  // namespace ringfuse::daemon
