// The names looked up through the mount since the last root switch, found or not: the dentries
// (possibly negative) the kernel may hold, which a switch (InodeTable::ReplaceRoot) hands over to
// be invalidated. Off until Track: it costs a set insert per lookup.
//
// Every queue thread notes the names it looks up, so nothing here is a lock all of them share
// (issue 21): the names live in shards by name, each with its own lock, which a lookup takes only
// while tracking, and their count is one atomic. What spans every shard (a switch, a handover's
// save and restore) holds them all (LockAll), before any of the inode table's locks.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"

namespace ringfuse::daemon {

class ABSL_LOCKABLE LookedUpNames {
 public:
  using Names = absl::flat_hash_set<std::pair<uint64_t, std::string>>;
  static constexpr size_t kDefaultLimit = 1 << 18;

  // Notes the names looked up from now on, at most `limit` between two switches, so that clients
  // looking up ever new missing names cannot grow the daemon without bound; past it, the names
  // are incomplete.
  void Track(size_t limit) { limit_.store(limit, std::memory_order_release); }
  // 0 while not tracking.
  size_t limit() const { return limit_.load(std::memory_order_acquire); }
  // Notes `name` in `parent`, looked up; `limit` is what limit() was as the lookup began (not 0).
  void Note(uint64_t parent, std::string_view name, size_t limit);

  // Every shard's lock, in index order, for what spans them all.
  void LockAll() ABSL_EXCLUSIVE_LOCK_FUNCTION();
  void UnlockAll() ABSL_UNLOCK_FUNCTION();
  // Moves the names into `names` and starts a new, complete set; returns whether the old one was
  // complete.
  bool Take(Names& names) ABSL_EXCLUSIVE_LOCKS_REQUIRED(this);
  // A handover's save and restore: the limit (0: not tracking), whether the names are complete,
  // and the names.
  void Save(uint64_t& limit, bool& complete,
            std::vector<std::pair<uint64_t, std::string>>& names) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(this);
  void Restore(uint64_t limit, bool complete,
               const std::vector<std::pair<uint64_t, std::string>>& names)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(this);

 private:
  // Many more shards than threads, as the inode table's: few lookups wait on one another.
  static constexpr size_t kShards = 256;

  struct alignas(64) Shard {
    absl::Mutex mutex;
    Names names ABSL_GUARDED_BY(mutex);
  };

  Shard& ShardOf(uint64_t parent, std::string_view name);

  Shard shards_[kShards];
  std::atomic<size_t> limit_{0};
  std::atomic<size_t> count_{0};
  std::atomic<bool> complete_{true};
};

}  // namespace ringfuse::daemon
