// Changes made once across crashes of a kept daemon (change_journal.h). The kernel sends a request
// again after a crash (the resend bit set in its unique); where a dead daemon began its change,
// it is answered with that daemon's result, or, where the daemon was killed in the middle, with
// the change found made, and only otherwise made now.
//
// Whether a change begun was made is told by its kind's evidence: one number read before the
// change and recorded with it, and a rule that reads the place again after the crash. There is
// one rule per kind of change (ChangeKind, changes_once.cc); a handler names its kind and its
// place, and writes no test of its own.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "base/errno.h"
#include "daemon/crash/change_journal.h"
#include "ringfuse/handler.h"

namespace ringfuse::daemon {

enum class ChangeKind {
  // MKNOD, MKDIR, SYMLINK, LINK, CREATE: made when the name named nothing before and names an
  // inode its maker owns now (a name another user made while the daemon was dead is not the
  // caller's: a create replayed on it would hand the caller that user's file).
  kNameAdded,
  // UNLINK, RMDIR: made when the name named an inode before and names another, or none, now.
  kNameRemoved,
  // RENAME, RENAME2 (an exchange too): made when the new name names the inode the old one named.
  kNameMoved,
  // A WRITE to an O_APPEND file: made as far as the file has grown since, at most its length (a
  // write stops between its pages at a kill, and the client is told of a short write).
  kAppended,
};

// Where a change happens.
struct ChangePlace {
  int dir_fd = -1;                // the name's directory
  const char* name = nullptr;     // the name added, removed or moved
  int to_dir_fd = -1;             // kNameMoved: the directory it moves to
  const char* to_name = nullptr;  // kNameMoved: its new name
  uid_t maker = 0;                // kNameAdded: who makes the name
  int file_fd = -1;               // kAppended: the file
  uint64_t length = 0;            // kAppended: the bytes appended
};

// What a change gave: a count, an fh or 0; or its error.
using ChangeResult = base::ErrnoOr<uint64_t>;

// The result of a change that gives no count: 0, or its error.
inline ChangeResult ChangeResultOf(base::Errno error) {
  if (!error.ok()) return error;
  return uint64_t{0};
}

class ChangesOnce {
 public:
  // Records in `journal` from now on (null: nothing is recorded, every change is made), and
  // answers requests resent after a crash from `earlier`, what a dead daemon's journal held
  // (ChangeJournal::Recover).
  void KeepIn(ChangeJournal* journal, ChangeJournal::Outcomes earlier) {
    journal_ = journal;
    earlier_ = std::move(earlier);
  }

  // The result of a change, made once: for a request resent whose change a dead daemon began,
  // the result it recorded; else, killed in the middle, the change's result when its kind's
  // evidence finds it made (0; for an append, the bytes the file grew by); else `execute()`'s.
  // `subject` names the change for the test hooks (test_hooks.h).
  ChangeResult Make(const RequestContext& context, std::string_view subject, ChangeKind kind,
                    const ChangePlace& place, absl::FunctionRef<ChangeResult()> execute);

  // Make, for a change whose effect the kernel never got though the change was made: CREATE,
  // whose fh the dead daemon gave no answer with. A change made and not failed (a result >= 0
  // recorded, or found made) answers `made_before(earlier)` instead of its recorded result.
  using MadeBefore = absl::FunctionRef<ChangeResult(const ChangeJournal::Outcome& earlier)>;
  ChangeResult Make(const RequestContext& context, std::string_view subject, ChangeKind kind,
                    const ChangePlace& place, absl::FunctionRef<ChangeResult()> execute,
                    MadeBefore made_before);

 private:
  // The dead daemon's record of this request's change, if it began it.
  const ChangeJournal::Outcome* Earlier(const RequestContext& context) const;
  ChangeResult Record(
      const RequestContext& context, std::string_view subject, ChangeKind kind,
      const ChangePlace& place,
      absl::FunctionRef<ChangeResult(const ChangeJournal::Outcome* earlier)> result);

  ChangeJournal* journal_ = nullptr;  // set once, before serving
  ChangeJournal::Outcomes earlier_;   // likewise, then only read
};

}  // namespace ringfuse::daemon
