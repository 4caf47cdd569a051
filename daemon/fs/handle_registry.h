// The handles (fh) the daemon gives the kernel for open files and directories, owned here until
// RELEASE or RELEASEDIR. What the kernel never releases (the mount went away first, or an
// open's reply never reached a caller) is freed with the filesystem rather than leaked.
//
// An fh is a number never given out twice, looked up on every request: an fh the kernel (or
// whoever writes to /dev/fuse) did not get from this registry, or one already released, finds
// nothing, and the request is answered EBADF, as a closed fd is, rather than taken for an
// address. A request holds its handle until it is done, even if a RELEASE comes meanwhile.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace ringfuse::daemon {

// One count for every registry, so that a directory's fh names no open file, nor the reverse.
inline std::atomic<uint64_t> last_fh_given{0};  // 64 bits: never wraps

// fh values given out from now on are above `last`: one a previous daemon gave out, or the last
// of a dead daemon's range (a kept daemon after a crash).
inline void GiveFhAbove(uint64_t last) {
  uint64_t given = last_fh_given.load(std::memory_order_relaxed);
  while (given < last &&
         !last_fh_given.compare_exchange_weak(given, last, std::memory_order_relaxed)) {
  }
}

// Sharded by fh, so that the opens, reads and releases of different files on different queue
// threads lock different shards (issue 21): fh values are given out in turn, so neighbouring
// opens land in neighbouring shards.
template <typename Handle>
class HandleRegistry {
 public:
  uint64_t Add(std::unique_ptr<Handle> handle) {
    const uint64_t fh = last_fh_given.fetch_add(1, std::memory_order_relaxed) + 1;
    Shard& shard = ShardOf(fh);
    absl::MutexLock lock(&shard.mutex);
    shard.owned.emplace(fh, std::move(handle));
    return fh;
  }

  // The handle `fh` names; null for an fh this registry never gave or has taken back.
  std::shared_ptr<Handle> Find(uint64_t fh) const {
    Shard& shard = ShardOf(fh);
    absl::ReaderMutexLock lock(&shard.mutex);
    auto known = shard.owned.find(fh);
    return known == shard.owned.end() ? nullptr : known->second;
  }

  // Takes the handle back at release; null as Find. It is freed when the last request using it
  // is done.
  std::shared_ptr<Handle> Take(uint64_t fh) {
    Shard& shard = ShardOf(fh);
    absl::MutexLock lock(&shard.mutex);
    auto node = shard.owned.extract(fh);
    return node.empty() ? nullptr : std::move(node.mapped());
  }

  // For a handover, with no request in progress: `visit(fh, handle)` for each handle held.
  template <typename Visit>
  void ForEach(Visit visit) const {
    for (Shard& shard : shards_) {
      absl::ReaderMutexLock lock(&shard.mutex);
      for (const auto& [fh, handle] : shard.owned) visit(fh, *handle);
    }
  }
  // Holds `handle` under the fh a previous daemon gave it, which no later Add gives again;
  // false if `fh` is 0 or held already.
  bool Restore(uint64_t fh, std::unique_ptr<Handle> handle) {
    if (fh == 0) return false;
    GiveFhAbove(fh);
    Shard& shard = ShardOf(fh);
    absl::MutexLock lock(&shard.mutex);
    return shard.owned.emplace(fh, std::move(handle)).second;
  }

  size_t size() const {
    size_t size = 0;
    for (Shard& shard : shards_) {
      absl::ReaderMutexLock lock(&shard.mutex);
      size += shard.owned.size();
    }
    return size;
  }

 private:
  static constexpr size_t kShards = 64;
  struct alignas(64) Shard {
    mutable absl::Mutex mutex;
    absl::flat_hash_map<uint64_t, std::shared_ptr<Handle>> owned ABSL_GUARDED_BY(mutex);
  };
  Shard& ShardOf(uint64_t fh) const { return shards_[fh % kShards]; }

  mutable Shard shards_[kShards];
};

}  // namespace ringfuse::daemon
