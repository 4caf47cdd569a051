// Revisions mode: REPO holds one directory per revision, the mount serves one of them, and a
// publish switches the served revision atomically and then invalidates what the kernel cached.
//
// Node ids follow the backing inode (InodeTable), so a file shared by two revisions (hard-linked
// between snapshot directories) keeps its node id and its cached pages, while a changed file is
// a different inode, hence a new node id that only a fresh lookup reaches. The order matters:
// the switch comes first and the invalidation second. Invalidating first would let a lookup
// that runs in between cache the old revision again, with nothing left to invalidate it.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/fd.h"
#include "daemon/inodes/inode_table.h"
#include "daemon/revisions/invalidation.h"
#include "ringfuse/notifier.h"

namespace ringfuse::daemon {

// The repository of revision directories.
class RevisionRepo {
 public:
  static absl::StatusOr<RevisionRepo> Open(const std::string& path);

  // An O_PATH fd to the revision's directory; NotFound naming the repository if there is none.
  absl::StatusOr<base::UniqueFd> OpenRevision(std::string_view name) const;
  // The revision served when none is named: the last name in version order ("r9" < "r10").
  absl::StatusOr<std::string> Newest() const;
  const std::string& path() const { return path_; }

 private:
  RevisionRepo(std::string path, base::UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}

  std::string path_;
  base::UniqueFd fd_;
};

struct PublishReport {
  std::string revision;
  InvalidationMethod method;
  absl::Duration switch_time;  // replacing the root and collecting what the kernel may cache
  InvalidationReport invalidation;
};

class Publisher {
 public:
  // `table` serves `current` already and has entry tracking on (InodeTable::TrackEntries).
  Publisher(RevisionRepo repo, std::string current, InodeTable& table, Notifier& notifier);

  // Returns once the switch and the invalidation are complete. One publish at a time.
  absl::StatusOr<PublishReport> Publish(std::string_view revision, InvalidationMethod method);
  std::string current() const;
  // `note(revision)` whenever the served revision changes, and once now: a kept daemon tells its
  // keeper, so that the daemon started after a crash serves the same one.
  void NoteEachSwitch(std::function<void(const std::string&)> note);

 private:
  const RevisionRepo repo_;
  InodeTable& table_;
  Notifier& notifier_;
  mutable absl::Mutex mutex_;
  std::string current_ ABSL_GUARDED_BY(mutex_);
  std::function<void(const std::string&)> note_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace ringfuse::daemon
