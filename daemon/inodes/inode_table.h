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
// Shared by every queue thread, so nothing on the request path takes a lock all of them share
// (issue 21): nodes live in shards by node id, the node serving each backing inode in shards by
// (st_dev, st_ino), each shard with its own reader-writer lock; finding an open node, counting a
// lookup and marking a node used take the shard's reader lock only (the count is atomic; the
// open-node budget is kept by CLOCK, one "used" bit per node, instead of one LRU list). Writes
// (a new node, FORGET's last lookup, a reopen) lock one shard. Only what spans shards takes the
// table's names lock: the names of nodes without a handle (so a daemon without
// CAP_DAC_READ_SEARCH, or a backing filesystem without lasting handles, serializes those) and
// the rare whole-table operations (a root switch, a handover's save and restore). Lock order:
// tracking shard (looked_up_names.h), names lock, backing shard, node shard; never two shards of
// one kind at once but in a whole-table operation, in index order.
//
// Every access to the backing tree goes through these fds with *at() calls on single names
// that may not be "", ".", ".." or contain '/', opened with O_NOFOLLOW: no path is ever
// resolved from a string, so no name, symlink or rename race can lead outside SOURCE.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/fd.h"
#include "daemon/inodes/inode_handle.h"
#include "daemon/inodes/looked_up_names.h"
#include "daemon/inodes/open_budget.h"
#include "daemon/inodes/striped_counter.h"

namespace ringfuse::daemon {

// A node's backing inode, open: a request that holds this keeps the fd open even if the table
// closes its own reference meanwhile.
struct Inode {
  uint64_t nodeid;
  dev_t dev;
  ino_t ino;
  base::UniqueFd path;  // O_PATH | O_NOFOLLOW
};

struct Found {
  std::shared_ptr<const Inode> inode;
  struct stat attr;
};

// What the kernel may hold from this table: every name it looked up (a dentry, possibly negative)
// and every node it has not forgotten, in no particular order.
struct KernelCache {
  LookedUpNames::Names entries;
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
// writer lock of the node's shard, so that the changes of one node come in order (a kept
// daemon's node_journal.h).
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

  // The number of nodes kept open by default: OpenLimitFor the soft fd limit.
  static size_t DefaultOpenLimit();
  // All but an eighth of `fd_limit`, or all but 1024 where that leaves more, yet at least a
  // quarter (at least 16, at most kMostOpen): what open files, lock owners, nodes only FORGET
  // closes and the transport keep aside.
  static size_t OpenLimitFor(size_t fd_limit);
  static constexpr size_t kFewestOpen = 16;
  static constexpr size_t kMostOpen = 262144;
  // How long the budget stays lowered by what an EMFILE took back (GiveBackFds).
  static constexpr absl::Duration kLoweredFor = absl::Seconds(5);

  // `root` is an O_PATH fd to SOURCE's top directory. The table lends its nodes' fds to opens
  // that find none free (fd_room.h) while it lives.
  explicit InodeTable(base::UniqueFd root, size_t open_limit = DefaultOpenLimit(),
                      absl::Duration lowered_for = kLoweredFor);
  ~InodeTable();
  InodeTable(const InodeTable&) = delete;
  InodeTable& operator=(const InodeTable&) = delete;

  // The entry `name` in directory `parent`, counted as one kernel lookup: an existing node if
  // the backing inode already has one, a new node id otherwise. Returns the error to answer
  // where there is one (EINVAL for a name that is not plain, ESTALE for a forgotten parent).
  // `maybe_open`: the name may well have a node open (false right after making it: that saves a
  // stat).
  base::Errno Lookup(uint64_t parent, std::string_view name, Found& found, bool maybe_open = true);
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
  // as one kernel lookup like Lookup. Returns the error to answer where there is one.
  base::Errno Adopt(base::UniqueFd path, Found& found);
  // The node, open; or ESTALE when the kernel has forgotten it or its inode is gone, or the
  // error that keeps it from being reopened now (EMFILE...).
  base::ErrnoOr<std::shared_ptr<const Inode>> Get(uint64_t nodeid);

  // Remember every (parent, name) looked up from now on, found or not, so that ReplaceRoot can
  // say which dentries the kernel may hold (looked_up_names.h), at most `limit` of them.
  void TrackEntries(size_t limit = LookedUpNames::kDefaultLimit) { looked_up_.Track(limit); }
  // Serves `root` (an O_PATH directory fd) as node 1 from now on, and returns what the kernel
  // may have cached before, forgetting the tracked names: the caller invalidates them next.
  // A lookup that started before this call either is in the returned names or resolves under
  // the new root, never an unreported old one: that is what makes switch-then-invalidate safe.
  KernelCache ReplaceRoot(base::UniqueFd root);
  // For a handover, with no request in progress: every node, and the fds that cannot be
  // reopened (the root's, and those only FORGET closes). Nodes a handle or a name reopens travel
  // without their fd, so the table hands over in bytes what it holds in fds.
  SavedTable Save() const;
  // Node ids given out from now on are `first` and above (a kept daemon after a crash).
  void GiveNodeIdsFrom(uint64_t first);
  // Tells `recorder` of every node from now on (before serving; it outlives the table).
  void RecordNodesIn(NodeRecorder* recorder);
  // After a crash, before serving: adds the nodes a dead daemon's recorder kept (each with a
  // handle, under its own id and lookup count) to this table's root, as already recorded. The
  // record is all that says which inode a node is, so a node is reopened by its handle only once
  // it is shown to be in SOURCE (a directory whose ".." chain reaches the root, a non-directory
  // named in such a directory); any other answers ESTALE until a lookup finds its inode with the
  // record's handle.
  absl::Status RestoreRecorded(std::vector<SavedNode> nodes);
  // Replaces everything this table holds (it serves no request yet) with `saved`, taking the
  // fds it names out of `fds`. InvalidArgument, leaving the table as it was, for a record that
  // does not hold together: no root, a node id twice, a parent or fd that is not there, an fd
  // that is not the node's inode.
  absl::Status Restore(const SavedTable& saved, std::vector<base::UniqueFd>& fds);

  // Lookups served so far, counting those made for READDIRPLUS.
  uint64_t lookups_served() const;

  size_t size() const;
  uint64_t LookupCount(uint64_t nodeid) const;
  size_t open_limit() const { return open_budget_.limit(); }
  // The budget now: open_limit(), less what opens took back on EMFILE in the last lowered_for.
  size_t budget() const { return open_budget_.now(); }
  // Closes up to `count` open nodes CLOCK finds unused and keeps the budget that much lower for
  // a while, so that the fds stay with whoever ran out; returns how many it closed.
  size_t GiveBack(size_t count);
  // Nodes whose fd is open now, and those among them that cannot be closed until FORGET (this
  // one without taking a lock: for a check on every lookup), the root included.
  size_t open_count() const;
  size_t pinned_count() const;
  // The least recently used of the nodes only FORGET can close, beyond the `keep` used most
  // recently: for the daemon to ask the kernel to drop them (NOTIFY_PRUNE). Each counts as used
  // now, so that the next call names others while the kernel's FORGETs are on their way.
  std::vector<uint64_t> UnclosableBeyond(size_t keep);

 private:
  // Many more shards than threads: a hot node (the directory every lookup walks) shares its
  // shard's lock with few others that are being added or dropped.
  static constexpr size_t kShards = 256;

  struct Entry {
    dev_t dev = 0;
    ino_t ino = 0;
    mode_t type = 0;     // S_IFMT bits: an inode number reused for another type is another node
    std::string handle;  // "": not reopenable by handle
    // Without a handle: the name it was last found by, under node `parent` (0: none known).
    // Changed under names_mutex_ and the shard's lock, so either lock reads it.
    uint64_t parent = 0;
    std::string name;
    size_t named_children = 0;          // nodes named under this one: it stays while any are
    std::shared_ptr<const Inode> open;  // null while closed
    size_t slot = 0;                    // where in its shard's `open` or `pinned` while open
    // Counted under the shard's reader lock (its writer lock when a recorder is told).
    std::atomic<uint64_t> lookups{0};
    // CLOCK's bit: used since the budget last looked at it.
    mutable std::atomic<bool> used{true};
    // A node only FORGET closes: when it was last used (a tick of use_ticks_), for
    // UnclosableBeyond's least recently used first.
    mutable std::atomic<uint64_t> last_use{0};
    bool recorded = false;  // by recorder_
    bool reopenable() const { return !handle.empty() || parent != 0; }
  };
  using NodeMap = absl::node_hash_map<uint64_t, Entry>;
  // Nodes by node id, with those of them open: the reopenable ones (CLOCK's ring: `hand` is
  // where its sweep goes on) and those only FORGET closes.
  struct alignas(64) Shard {
    mutable absl::Mutex mutex;
    NodeMap nodes ABSL_GUARDED_BY(mutex);
    std::vector<uint64_t> open ABSL_GUARDED_BY(mutex);
    std::vector<uint64_t> pinned ABSL_GUARDED_BY(mutex);
    size_t hand ABSL_GUARDED_BY(mutex) = 0;
    // Recorded nodes not shown to be in SOURCE after a crash, with the handle their record
    // gave: kept out of the entry, which has none and so no way back (RestoreRecorded).
    absl::flat_hash_map<uint64_t, std::string> unproven ABSL_GUARDED_BY(mutex);
  };
  // The node now serving each backing inode (an older node of a reused inode number may live on).
  struct alignas(64) BackingShard {
    mutable absl::Mutex mutex;
    absl::flat_hash_map<std::pair<dev_t, ino_t>, uint64_t> nodeids ABSL_GUARDED_BY(mutex);
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
  // Fds the table let go of, closed once its locks are released.
  using Closing = std::vector<std::shared_ptr<const Inode>>;
  // Every shard's lock and the names lock, in the lock order: for what spans the whole table.
  class AllLocked {
   public:
    explicit AllLocked(const InodeTable& table) : table_(table) {
      table_.looked_up_.LockAll();
      table_.names_mutex_.Lock();
      for (BackingShard& shard : table_.backing_) shard.mutex.Lock();
      for (Shard& shard : table_.shards_) shard.mutex.Lock();
    }
    ~AllLocked() {
      for (Shard& shard : table_.shards_) shard.mutex.Unlock();
      for (BackingShard& shard : table_.backing_) shard.mutex.Unlock();
      table_.names_mutex_.Unlock();
      table_.looked_up_.UnlockAll();
    }
    AllLocked(const AllLocked&) = delete;
    AllLocked& operator=(const AllLocked&) = delete;

   private:
    const InodeTable& table_;
  };

  Shard& ShardOf(uint64_t nodeid) const { return shards_[nodeid % kShards]; }
  BackingShard& BackingOf(dev_t dev, ino_t ino) const;
  // The entry of `nodeid` in `shard`, or null.
  static Entry* Find(Shard& shard, uint64_t nodeid) ABSL_SHARED_LOCKS_REQUIRED(shard.mutex);

  // Node 1 serves the directory `root` from now on.
  void ServeAsRoot(base::UniqueFd root);
  // Counts a lookup and, when tracking, notes its name; false if the parent is forgotten.
  bool Begin(uint64_t parent, std::string_view name);
  // For a lookup whose stat found `found.attr`: a node open for that inode, counted as looked up,
  // into `found.inode`; false if there is none. `unnamed`: the node has no handle, so it is to be
  // named `name` in `parent` (NameFound).
  bool FoundOpen(Found& found, bool& unnamed);
  // For a lookup that opened `path`: the node serving its inode, counted, or a new node; true for
  // a new one.
  bool FoundOrAdded(base::UniqueFd path, std::string handle, uint64_t parent, std::string_view name,
                    Found& found, bool& unnamed);
  // FORGET of some of a node's lookups, not the last, with no recorder to tell: under the shard's
  // reader lock; false, changing nothing, otherwise.
  bool ForgetSome(uint64_t nodeid, uint64_t count);
  // Counts one more lookup of the entry, telling the recorder.
  void CountLookup(uint64_t nodeid, Entry& entry);
  // A new node for the backing inode of `path` (its attributes in found.attr, its handle
  // `handle`); one lookup. The caller holds the backing inode's shard.
  void AddNode(base::UniqueFd path, std::string handle, Found& found);
  // After a lookup of a node without a handle: names it `name` in `parent`, unless it was there
  // before (not `added`) and names moved since the lookup began (`names_moved`).
  void NameFound(uint64_t nodeid, uint64_t parent, std::string_view name, uint64_t names_moved,
                 bool added);
  // Whether the node `entry` is the inode a lookup of `name` in `parent` found (`attr`, `handle`).
  static bool SameInode(const Entry& entry, const std::string& handle, const struct stat& attr,
                        uint64_t parent, std::string_view name);
  // Whether the node is an unproven one whose record's handle is `handle`, the inode a lookup
  // found (`attr`); if so it has that handle from now on.
  static bool ProvenByLookup(Shard& shard, uint64_t nodeid, Entry& entry, const std::string& handle,
                             const struct stat& attr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);

  // A handover's restore (inode_table_handover.cc), with every lock held: drops every node,
  // then adds the saved ones, opening those in `open`.
  void Clear(Closing& closing);
  void RestoreNodes(const std::vector<SavedNode>& nodes,
                    absl::flat_hash_map<uint64_t, base::UniqueFd>& open);

  // The open-node budget (inode_table_budget.cc).
  // Makes `inode` the entry's open fd, marked used.
  void Install(Shard& shard, Entry& entry, std::shared_ptr<const Inode> inode)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);
  // Puts an open entry on the list it belongs on (or takes it off).
  void List(Shard& shard, uint64_t nodeid, Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);
  void Unlist(Shard& shard, Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);
  // Takes the entry's open fd out of the table (into `closing`).
  void Close(Shard& shard, Entry& entry, Closing& closing)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);
  // Marks an open node used now.
  void Touch(const Entry& entry) const;
  // Closes reopenable nodes CLOCK finds unused until at most budget() are open; call with no
  // lock held.
  void CloseBeyondLimit();
  // GiveBack for fd_room.h's lenders.
  static size_t GiveBackFds(void* table, size_t count);
  // One CLOCK sweep over a shard: closes the first node not used since the last sweep, clearing
  // the bits it passes; false when every node was used (or there is none).
  bool CloseOneUnused(Shard& shard, Closing& closing) ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);

  // Names of nodes without a handle (inode_table_names.cc), under names_mutex_.
  // Gives a node without a handle the name `name` under `parent` (taking it from any other node).
  void Name(uint64_t nodeid, uint64_t parent, std::string_view name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(names_mutex_);
  // Takes the node's name away; its parent goes too if forgotten with no other name under it.
  // A closed node left with no way back gets `held`, if that is its fd, as its open one.
  void Unname(uint64_t nodeid, const std::shared_ptr<const Inode>& held = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(names_mutex_);
  // Sets the entry's name (parent 0: none), moving it between its shard's lists while open;
  // returns its old one. False, changing nothing, if the node is gone.
  bool SetName(uint64_t nodeid, uint64_t parent, std::string name,
               std::pair<uint64_t, std::string>& old) ABSL_EXCLUSIVE_LOCKS_REQUIRED(names_mutex_);
  // Counts one more name under `parent`; false if it is gone.
  bool AddChild(uint64_t parent) ABSL_EXCLUSIVE_LOCKS_REQUIRED(names_mutex_);
  bool IsAbove(uint64_t nodeid, uint64_t parent) const ABSL_SHARED_LOCKS_REQUIRED(names_mutex_);
  // At a root switch, before it: keeps the old root open for the names under it.
  void KeepOldRootForItsNames() ABSL_EXCLUSIVE_LOCKS_REQUIRED(names_mutex_);
  // Takes `name` from those under `parent`, dropping the parent if the kernel forgot it and no
  // name is left under it, then each parent kept only for it.
  void LeaveParent(uint64_t parent, const std::string& name, Closing& closing)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(names_mutex_);
  // The node `name` in `parent` names, or 0.
  uint64_t NodeIdNamed(uint64_t parent, std::string_view name) const
      ABSL_SHARED_LOCKS_REQUIRED(names_mutex_);
  // FORGET of a node that has a name or names under it.
  void ForgetNamed(uint64_t nodeid, Closing& closing) ABSL_EXCLUSIVE_LOCKS_REQUIRED(names_mutex_);

  // Takes the node out of its shard (its fd into `closing`, its name, if `name`, into it);
  // returns its backing inode, for Unserve.
  std::pair<dev_t, ino_t> Erase(Shard& shard, NodeMap::iterator entry, Closing& closing,
                                std::pair<uint64_t, std::string>* name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mutex);
  // Takes `backing`'s mapping to the node away, if it is still the node's.
  void Unserve(uint64_t nodeid, std::pair<dev_t, ino_t> backing);
  // Drops the node if the kernel has forgotten it and nothing is named under it, its name into
  // `name`, to leave its parent; false if it stays.
  bool DropIfUnused(uint64_t nodeid, Closing& closing, std::pair<uint64_t, std::string>& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(names_mutex_);
  // Tells recorder_ of the entry's lookup count.
  void Count(uint64_t nodeid, const Entry& entry) const {
    if (entry.recorded) {
      recorder_.load(std::memory_order_relaxed)->Counted(nodeid, entry.lookups.load());
    }
  }
  // Get of a closed node without a handle: its chain of names walked, again if names moved.
  base::ErrnoOr<std::shared_ptr<const Inode>> ReopenByNames(uint64_t nodeid);
  // One walk of ReopenByNames; `names_moved`: names_moved_ when the chain was read.
  base::ErrnoOr<std::shared_ptr<const Inode>> WalkAndReopen(uint64_t nodeid, uint64_t& names_moved);
  // The chain of closed nodes from `nodeid` up to one that is open (into `top`) or has a handle,
  // or false (for ESTALE) when a node of it is gone or cannot be reopened.
  bool ClosedChain(uint64_t nodeid, std::vector<Closed>& chain, std::shared_ptr<const Inode>& top)
      ABSL_SHARED_LOCKS_REQUIRED(names_mutex_);
  // Opens a closed node again, by its handle or else by its name under `parent`, checking that
  // it still reaches (dev, ino).
  base::ErrnoOr<std::shared_ptr<const Inode>> Reopen(const Closed& closed, const Inode* parent);

  InodeHandles handles_;
  OpenBudget open_budget_;
  mutable Shard shards_[kShards];
  mutable BackingShard backing_[kShards];
  mutable LookedUpNames looked_up_;  // since the last root switch, while tracking
  mutable absl::Mutex names_mutex_;
  // Each name of a node without a handle (Entry::parent, Entry::name), to find it at a rename.
  absl::flat_hash_map<std::pair<uint64_t, std::string>, uint64_t> by_name_
      ABSL_GUARDED_BY(names_mutex_);
  std::atomic<bool> names_given_{false};  // by_name_ is not empty, for a look without the lock
  // Counts the names taken from or moved off nodes: a walk or lookup that read a name before
  // can tell it may be stale.
  std::atomic<uint64_t> names_moved_{0};
  std::atomic<uint64_t> next_nodeid_{kRootNodeId + 1};
  std::atomic<size_t> open_count_{0};           // reopenable nodes open, in every shard's `open`
  std::atomic<size_t> pinned_count_{0};         // in every shard's `pinned`
  std::atomic<size_t> evict_hand_{0};           // the shard CLOCK looks at next
  mutable std::atomic<uint64_t> use_ticks_{0};  // Entry::last_use's clock
  StripedCounter lookups_served_;
  // Set with every shard locked, so that holding any one shard's lock reads it.
  std::atomic<NodeRecorder*> recorder_{nullptr};
};

// Whether `name` is a single path component the daemon may open under a directory fd.
bool IsPlainName(std::string_view name);

}  // namespace ringfuse::daemon
