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
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
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

  size_t size() const;
  uint64_t LookupCount(uint64_t nodeid) const;

 private:
  struct Entry {
    std::shared_ptr<const Inode> inode;
    uint64_t lookups = 0;
  };

  mutable absl::Mutex mutex_;
  absl::flat_hash_map<uint64_t, Entry> by_nodeid_ ABSL_GUARDED_BY(mutex_);
  std::map<std::pair<dev_t, ino_t>, uint64_t> by_backing_ ABSL_GUARDED_BY(mutex_);
  uint64_t next_nodeid_ ABSL_GUARDED_BY(mutex_) = kRootNodeId + 1;
};

// Whether `name` is a single path component the daemon may open under a directory fd.
bool IsPlainName(std::string_view name);

}  // namespace ringfuse::daemon
