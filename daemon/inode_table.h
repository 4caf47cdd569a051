// The passthrough daemon's inodes: one node id per backing inode, with the kernel's lookup count,
// which FORGET brings back down.
//
// The kernel may remember far more inodes than the daemon may hold fds (at the default limit of
// 1024, one fd per node failed a plain `find` with EMFILE), so a node keeps an O_PATH fd only
// while it is among the most recently used, at most open_limit() of them, and is reopened on
// demand:
// - by its file handle (inode_handle.h), where handles can be opened: it reaches the inode
//   whatever happened to its names;
// - otherwise (no CAP_DAC_READ_SEARCH: a user's own daemon; a filesystem without lasting
//   handles) by the name it was last found or renamed to through the mount, under its parent,
//   itself open or reopened the same way. A directory stays in the table, forgotten or not, while
//   a node is named under it. What was renamed or removed behind the mount's back can no longer
//   be reached this way: its node answers ESTALE, and the kernel looks the new name up.
// Either way a reopened fd must reach the node's (st_dev, st_ino), or the node answers ESTALE.
// A node with neither (an O_TMPFILE, a file whose name was removed through the mount) keeps its
// fd until FORGET; pinned_count() says how many, and UnclosableBeyond names those for the daemon
// to ask the kernel to forget (NOTIFY_PRUNE).
//
// Every access to the backing tree goes through these fds with *at() calls on single names
// that may not be "", ".", ".." or contain '/', opened with O_NOFOLLOW: no path is ever
// resolved from a string, so no name, symlink or rename race can lead outside SOURCE.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "daemon/inode_handle.h"
#include "transport/fd.h"

namespace ringfuse::daemon {

// A node's backing inode, open: a request that holds this keeps the fd open even if the table
// closes its own reference meanwhile.
struct Inode {
  uint64_t nodeid;
  dev_t dev;
  ino_t ino;
  internal::UniqueFd path;  // O_PATH | O_NOFOLLOW
};

struct Found {
  std::shared_ptr<const Inode> inode;
  struct stat attr;
};

// What the kernel may hold from this table: every name it looked up (a dentry, possibly negative)
// and every node it has not forgotten, in no particular order.
struct KernelCache {
  absl::flat_hash_set<std::pair<uint64_t, std::string>> entries;
  std::vector<uint64_t> nodeids;
  // False when more names were looked up than tracking keeps: `entries` then misses some.
  bool entries_complete = true;
};

// A node as a handover carries it to the next daemon (handover_state.h).
struct SavedNode {
  uint64_t nodeid = 0;
  dev_t dev = 0;
  ino_t ino = 0;
  mode_t type = 0;
  std::string handle;
  uint64_t parent = 0;  // with `name`: the name it is reopened by, when it has no handle
  std::string name;
  uint64_t lookups = 0;
  bool serves_backing = false;  // the node now serving (dev, ino): an older one may live on
  // Save: the table's open fd of a node only FORGET may close (and of the root), or -1; it stays
  // the table's. Restore: the index of that fd in the fds given.
  int fd = -1;
};

// The whole table as a handover carries it.
struct SavedTable {
  std::vector<SavedNode> nodes;
  uint64_t next_nodeid = 0;
  uint64_t names_moved = 0;
  uint64_t lookups_served = 0;
  uint64_t tracked_entries_limit = 0;  // 0: not tracking
  bool entries_complete = true;
  std::vector<std::pair<uint64_t, std::string>> entries;  // tracked since the last switch
  // The mounts under SOURCE whose handles reopen nodes: the mount id and, in Save, an fd of its
  // top directory (kept by the table), in Restore its index in the fds given; -1 for a mount
  // whose handles do not outlive its inode cache.
  std::vector<std::pair<int, int>> handle_mounts;
};

// Told of every node the table makes, every change of its lookup count and its end, under the
// table's lock (a kept daemon's node_journal.h).
class NodeRecorder {
 public:
  virtual ~NodeRecorder() = default;
  // Whether the node is recorded; the table says so again when it drops it.
  virtual bool Added(uint64_t nodeid, dev_t dev, ino_t ino, mode_t type, std::string_view handle,
                     uint64_t lookups) = 0;
  virtual void Counted(uint64_t nodeid, uint64_t lookups) = 0;
  virtual void Dropped(uint64_t nodeid, bool recorded) = 0;
};

class InodeTable {
 public:
  static constexpr uint64_t kRootNodeId = 1;

  // The number of nodes kept open by default: a quarter of the fd limit, so that open files,
  // lock owners' opens and the transport have the rest.
  static size_t DefaultOpenLimit();

  // `root` is an O_PATH fd to SOURCE's top directory.
  explicit InodeTable(internal::UniqueFd root, size_t open_limit = DefaultOpenLimit());

  // The entry `name` in directory `parent`, counted as one kernel lookup: an existing node if
  // the backing inode already has one, a new node id otherwise. Returns 0 or the errno to
  // answer (EINVAL for a name that is not plain, ESTALE for a forgotten parent).
  // `maybe_open`: the name may well have a node open (false right after making it: that saves a
  // stat).
  int Lookup(uint64_t parent, std::string_view name, Found& found, bool maybe_open = true);
  // The kernel forgets `count` lookups; the node is dropped when none remain (never the root) and
  // no node is named under it.
  void Forget(uint64_t nodeid, uint64_t count);
  // Told after `name` in `parent` was removed (unlink, rmdir) through the mount: the node it
  // named, if any, can no longer be reopened by it. `held`: what NodeNamed gave before the
  // removal, which the node keeps open until FORGET if it has no other way back.
  void Removed(uint64_t parent, std::string_view name, const std::shared_ptr<const Inode>& held);
  // Told after a rename through the mount: the node named `old_name` in `old_parent` is now
  // `new_name` in `new_parent`, whose node, if any, lost its name (or, `exchange`, took the old);
  // `replaced_held` is what NodeNamed gave for that one before the rename, as for Removed.
  void Renamed(uint64_t old_parent, std::string_view old_name, uint64_t new_parent,
               std::string_view new_name, bool exchange,
               const std::shared_ptr<const Inode>& replaced_held);
  // The node `name` in `parent` names now, open, if the table knows it by that name: held by a
  // caller about to remove the name, for Removed or Renamed.
  std::shared_ptr<const Inode> NodeNamed(uint64_t parent, std::string_view name);
  // Whether closed nodes are reopened by file handle; otherwise by name.
  bool reopens_by_handle() const { return handles_.openable(); }
  InodeHandles& handles() { return handles_; }
  // An inode that has no name to look it up by (an O_TMPFILE), from an O_PATH fd to it, counted
  // as one kernel lookup like Lookup. Returns 0 or the errno to answer.
  int Adopt(internal::UniqueFd path, Found& found);
  // The node, open; null with errno set when the kernel has forgotten it (ESTALE), its inode is
  // gone (ESTALE) or it cannot be reopened now (EMFILE...).
  std::shared_ptr<const Inode> Get(uint64_t nodeid);

  // Remember every (parent, name) looked up from now on, found or not, so that ReplaceRoot can
  // say which dentries the kernel may hold. Off by default: it costs a set insert per lookup.
  // At most `limit` names are kept between two switches, so that clients looking up ever new
  // missing names cannot grow the daemon without bound; past it, the cache is incomplete.
  static constexpr size_t kDefaultTrackedEntries = 1 << 18;
  void TrackEntries(size_t limit = kDefaultTrackedEntries);
  // Serves `root` (an O_PATH directory fd) as node 1 from now on, and returns what the kernel
  // may have cached before, forgetting the tracked names: the caller invalidates them next.
  // A lookup that started before this call either is in the returned names or resolves under
  // the new root, never an unreported old one: that is what makes switch-then-invalidate safe.
  KernelCache ReplaceRoot(internal::UniqueFd root);
  // For a handover, with no request in progress: every node, and the fds that cannot be
  // reopened (the root's, and those only FORGET closes). Nodes a handle or a name reopens travel
  // without their fd, so the table hands over in bytes what it holds in fds.
  SavedTable Save() const;
  // Node ids given out from now on are `first` and above (a kept daemon after a crash).
  void GiveNodeIdsFrom(uint64_t first);
  // Tells `recorder` of every node from now on (before serving; it outlives the table).
  void RecordNodesIn(NodeRecorder* recorder);
  // After a crash, before serving: adds the nodes a dead daemon's recorder kept (each with a
  // handle, under its own id and lookup count) to this table's root, as already recorded.
  absl::Status RestoreRecorded(std::vector<SavedNode> nodes);
  // Replaces everything this table holds (it serves no request yet) with `saved`, taking the
  // fds it names out of `fds`. InvalidArgument, leaving the table as it was, for a record that
  // does not hold together: no root, a node id twice, a parent or fd that is not there, an fd
  // that is not the node's inode.
  absl::Status Restore(const SavedTable& saved, std::vector<internal::UniqueFd>& fds);

  // Lookups served so far, counting those made for READDIRPLUS.
  uint64_t lookups_served() const;

  size_t size() const;
  uint64_t LookupCount(uint64_t nodeid) const;
  size_t open_limit() const { return open_limit_; }
  // Nodes whose fd is open now, and those among them that cannot be closed until FORGET (this
  // one without taking the lock: for a check on every lookup), the root included.
  size_t open_count() const;
  size_t pinned_count() const;
  // The least recently used of the nodes only FORGET can close, beyond the `keep` used most
  // recently: for the daemon to ask the kernel to drop them (NOTIFY_PRUNE). Each counts as used
  // now, so that the next call names others while the kernel's FORGETs are on their way.
  std::vector<uint64_t> UnclosableBeyond(size_t keep);

 private:
  struct Entry {
    dev_t dev = 0;
    ino_t ino = 0;
    mode_t type = 0;     // S_IFMT bits: an inode number reused for another type is another node
    std::string handle;  // "": not reopenable by handle
    // Without a handle: the name it was last found by, under node `parent` (0: none known).
    uint64_t parent = 0;
    std::string name;
    size_t named_children = 0;             // nodes named under this one: it stays while any are
    std::shared_ptr<const Inode> open;     // null while closed
    std::list<uint64_t>::iterator recent;  // where in recent_ or pinned_ while open (not root)
    uint64_t lookups = 0;
    bool recorded = false;  // by recorder_
    bool reopenable() const { return !handle.empty() || parent != 0; }
  };
  // What reopening a closed node needs, copied out of its entry.
  struct Closed {
    uint64_t nodeid;
    dev_t dev;
    ino_t ino;
    mode_t type;
    std::string handle;
    std::string name;
  };
  // Fds the table let go of, closed once its lock is released.
  using Closing = std::vector<std::shared_ptr<const Inode>>;

  // Node 1 serves the directory `root` from now on.
  void ServeAsRoot(internal::UniqueFd root) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // A new node for the backing inode of `path`, whose attributes are in found.attr and whose
  // handle is `handle` ("": reopened by `name` under `parent`, or kept open if `parent` is 0);
  // one lookup.
  void AddNode(internal::UniqueFd path, std::string handle, uint64_t parent, std::string_view name,
               Found& found, Closing& closing) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Counts a lookup and, when tracking, notes its name; false if the parent is forgotten.
  // `names_moved`: names_moved_ now.
  bool Begin(uint64_t parent, std::string_view name, uint64_t& names_moved);
  // For a lookup whose stat found `found.attr`: a node open for that inode, counted as looked up
  // and named `name` in `parent`, into `found.inode`; false if there is none.
  bool FoundOpen(uint64_t parent, std::string_view name, uint64_t names_moved, Found& found);
  // Whether the node `entry` is the inode a lookup of `name` in `parent` found (`attr`, `handle`).
  bool SameInode(const Entry& entry, const std::string& handle, const struct stat& attr,
                 uint64_t parent, std::string_view name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void Track(uint64_t parent, std::string_view name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Makes `inode` the entry's open fd, the most recently used; what must close goes to `closing`
  // (closed after the lock is let go).
  void Install(Entry& entry, std::shared_ptr<const Inode> inode, Closing& closing)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // The list of open nodes `entry` is on while open: recent_ or pinned_.
  std::list<uint64_t>& ListOf(const Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    return entry.reopenable() ? recent_ : pinned_;
  }
  // Puts an open entry on the list it belongs on, as the most recently used.
  void List(uint64_t nodeid, Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void Unlist(Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Marks an open node as the most recently used.
  void Touch(uint64_t nodeid, Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Closes the least recently used reopenable nodes beyond open_limit_.
  void CloseBeyondLimit(Closing& closing) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Takes the entry's open fd out of the table (into `closing`).
  void Close(Entry& entry, Closing& closing) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Gives a node without a handle the name `name` under `parent` (taking it from any other node).
  void Name(uint64_t nodeid, Entry& entry, uint64_t parent, std::string_view name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Takes the node's name away; its parent goes too if forgotten with no other name under it.
  // A closed node left with no way back gets `held`, if that is its fd, as its open one.
  void Unname(uint64_t nodeid, Entry& entry, const std::shared_ptr<const Inode>& held = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  bool IsAbove(uint64_t nodeid, uint64_t parent) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // At a root switch, before it: keeps the old root open for the names under it.
  void KeepOldRootForItsNames() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Takes `name` from those under `parent`; returns whether the parent is to be dropped now (the
  // kernel forgot it and it has no names under it left).
  bool LeaveParent(uint64_t parent, const std::string& name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void DropUnderLock(uint64_t nodeid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Tells recorder_ of the entry's lookup count.
  void Count(uint64_t nodeid, const Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    if (entry.recorded) recorder_->Counted(nodeid, entry.lookups);
  }
  // The node `name` in `parent` names, or 0.
  uint64_t NodeIdNamed(uint64_t parent, std::string_view name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Drops a node the kernel has forgotten and nothing is named under, then each parent that
  // was kept only for it; open fds go to `closing`.
  void Drop(uint64_t nodeid, Closing& closing) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // One walk of Get; `names_moved`: names_moved_ when the chain was read.
  std::shared_ptr<const Inode> WalkAndReopen(uint64_t nodeid, uint64_t& names_moved);
  // Opens a closed node again, by its handle or else by its name under `parent`, checking that
  // it still reaches (dev, ino).
  std::shared_ptr<const Inode> Reopen(const Closed& closed, const Inode* parent);

  InodeHandles handles_;
  const size_t open_limit_;
  mutable absl::Mutex mutex_;
  // A node hash map: entries are referred to across the inserts and erases of other nodes.
  absl::node_hash_map<uint64_t, Entry> by_nodeid_ ABSL_GUARDED_BY(mutex_);
  // Each name of a node without a handle (Entry::parent, Entry::name), to find it at a rename.
  absl::flat_hash_map<std::pair<uint64_t, std::string>, uint64_t> by_name_ ABSL_GUARDED_BY(mutex_);
  // The node now serving each backing inode (an older node of a reused inode number may live on).
  // A hash map: every lookup asks it, and a handover's save and restore once per node (as a
  // tree it was most of their cost, 0.7 us per node).
  absl::flat_hash_map<std::pair<dev_t, ino_t>, uint64_t> by_backing_ ABSL_GUARDED_BY(mutex_);
  // Open nodes but the root, newest first: those a handle reopens, and those only FORGET closes.
  std::list<uint64_t> recent_ ABSL_GUARDED_BY(mutex_);
  std::list<uint64_t> pinned_ ABSL_GUARDED_BY(mutex_);
  std::atomic<size_t> pinned_size_{0};  // pinned_.size(), for a look without the lock
  uint64_t next_nodeid_ ABSL_GUARDED_BY(mutex_) = kRootNodeId + 1;
  // Counts the names taken from or moved off nodes: a walk or lookup that read a name before
  // can tell it may be stale.
  uint64_t names_moved_ ABSL_GUARDED_BY(mutex_) = 0;
  size_t tracked_entries_limit_ ABSL_GUARDED_BY(mutex_) = 0;  // 0: not tracking
  bool entries_complete_ ABSL_GUARDED_BY(mutex_) = true;
  decltype(KernelCache::entries) entries_ ABSL_GUARDED_BY(mutex_);
  uint64_t lookups_served_ ABSL_GUARDED_BY(mutex_) = 0;
  NodeRecorder* recorder_ ABSL_GUARDED_BY(mutex_) = nullptr;
};

// Whether `name` is a single path component the daemon may open under a directory fd.
bool IsPlainName(std::string_view name);

}  // namespace ringfuse::daemon
