// The passthrough daemon's inodes: one node id per backing inode (st_dev, st_ino), each holding
// an O_PATH fd to it and the kernel's lookup count, which FORGET brings back down.
//
// Every access to the backing tree goes through these fds with *at() calls on single names
// that may not be "", ".", ".." or contain '/', opened with O_NOFOLLOW: no path is ever
// resolved from a string, so no name, symlink or rename race can lead outside SOURCE.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "transport/fd.h"

namespace ringfuse::daemon {

struct Inode {
  uint64_t nodeid;
  dev_t dev;
  ino_t ino;
  UniqueFd path;  // O_PATH | O_NOFOLLOW
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

class InodeTable {
 public:
  static constexpr uint64_t kRootNodeId = 1;

  // `root` is an O_PATH fd to SOURCE's top directory.
  explicit InodeTable(UniqueFd root);

  // The entry `name` in directory `parent`, counted as one kernel lookup: an existing node if
  // the backing inode already has one, a new node id otherwise. Returns 0 or the errno to
  // answer (EINVAL for a name that is not plain, ESTALE for a forgotten parent).
  int Lookup(uint64_t parent, std::string_view name, Found& found);
  // The kernel forgets `count` lookups; the node is dropped when none remain (never the root).
  void Forget(uint64_t nodeid, uint64_t count);
  // An inode that has no name to look it up by (an O_TMPFILE), from an O_PATH fd to it, counted
  // as one kernel lookup like Lookup. Returns 0 or the errno to answer.
  int Adopt(UniqueFd path, Found& found);
  // The node, or null when the kernel has forgotten it (or never had it).
  std::shared_ptr<const Inode> Get(uint64_t nodeid) const;

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
  KernelCache ReplaceRoot(UniqueFd root);
  // Lookups served so far, counting those made for READDIRPLUS.
  uint64_t lookups_served() const;

  size_t size() const;
  uint64_t LookupCount(uint64_t nodeid) const;

 private:
  struct Entry {
    std::shared_ptr<const Inode> inode;
    uint64_t lookups = 0;
  };

  // Node 1 serves the directory `root` from now on.
  void ServeAsRoot(UniqueFd root) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // A new node for the backing inode of `path`, whose attributes are in found.attr; one lookup.
  void AddNode(UniqueFd path, Found& found) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Counts a lookup and, when tracking, notes its name; returns the parent, null if forgotten.
  std::shared_ptr<const Inode> Begin(uint64_t parent, std::string_view name);
  void Track(uint64_t parent, std::string_view name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  mutable absl::Mutex mutex_;
  absl::flat_hash_map<uint64_t, Entry> by_nodeid_ ABSL_GUARDED_BY(mutex_);
  std::map<std::pair<dev_t, ino_t>, uint64_t> by_backing_ ABSL_GUARDED_BY(mutex_);
  uint64_t next_nodeid_ ABSL_GUARDED_BY(mutex_) = kRootNodeId + 1;
  size_t tracked_entries_limit_ ABSL_GUARDED_BY(mutex_) = 0;  // 0: not tracking
  bool entries_complete_ ABSL_GUARDED_BY(mutex_) = true;
  decltype(KernelCache::entries) entries_ ABSL_GUARDED_BY(mutex_);
  uint64_t lookups_served_ ABSL_GUARDED_BY(mutex_) = 0;
};

// Whether `name` is a single path component the daemon may open under a directory fd.
bool IsPlainName(std::string_view name);

}  // namespace ringfuse::daemon
