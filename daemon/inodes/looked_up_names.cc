#include "daemon/inodes/looked_up_names.h"

#include "absl/hash/hash.h"

namespace ringfuse::daemon {

LookedUpNames::Shard& LookedUpNames::ShardOf(uint64_t parent, std::string_view name) {
  return shards_[absl::Hash<std::pair<uint64_t, std::string_view>>{}({parent, name}) % kShards];
}

// A name counts once however often it is looked up: only one not noted yet takes room.
void LookedUpNames::Note(uint64_t parent, std::string_view name, size_t limit) {
  Shard& shard = ShardOf(parent, name);
  absl::MutexLock lock(&shard.mutex);
  std::pair<uint64_t, std::string> key(parent, name);
  if (shard.names.contains(key)) return;
  if (count_.fetch_add(1) < limit) {
    shard.names.insert(std::move(key));
  } else {
    count_.fetch_sub(1);
    complete_ = false;
  }
}

void LookedUpNames::LockAll() {
  for (Shard& shard : shards_) shard.mutex.Lock();
}

void LookedUpNames::UnlockAll() {
  for (Shard& shard : shards_) shard.mutex.Unlock();
}

bool LookedUpNames::Take(Names& names) {
  for (Shard& shard : shards_) {
    names.merge(shard.names);
    shard.names.clear();
  }
  count_ = 0;
  return complete_.exchange(true);
}

void LookedUpNames::Save(uint64_t& limit, bool& complete,
                         std::vector<std::pair<uint64_t, std::string>>& names) const {
  limit = limit_.load();
  complete = complete_.load();
  for (const Shard& shard : shards_) {
    names.insert(names.end(), shard.names.begin(), shard.names.end());
  }
}

void LookedUpNames::Restore(uint64_t limit, bool complete,
                            const std::vector<std::pair<uint64_t, std::string>>& names) {
  for (Shard& shard : shards_) shard.names.clear();
  limit_ = limit;
  complete_ = complete;
  for (const auto& name : names) ShardOf(name.first, name.second).names.insert(name);
  count_ = names.size();
}

}  // namespace ringfuse::daemon
