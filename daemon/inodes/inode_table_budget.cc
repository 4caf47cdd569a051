// The inode table's open-node budget: at most open_limit() reopenable nodes keep an fd, chosen
// by CLOCK. Each node has a "used" bit, set by every request that reaches it (a store under the
// shard's reader lock, no list to reorder); closing sweeps the shards in turn and closes the
// first node whose bit is clear, clearing those it passes, so a node used since the sweep last
// passed stays open. The nodes only FORGET closes are kept apart, with a use tick for naming
// the least recently used of them (UnclosableBeyond). An open elsewhere in the daemon that finds
// no fd free takes some back (GiveBack), and the budget stays that much lower a while
// (open_budget.h).
#include <algorithm>

#include "daemon/inodes/inode_table.h"

namespace ringfuse::daemon {

void InodeTable::Install(Shard& shard, Entry& entry, std::shared_ptr<const Inode> inode) {
  const uint64_t nodeid = inode->nodeid;
  entry.open = std::move(inode);
  entry.used.store(true, std::memory_order_relaxed);
  List(shard, nodeid, entry);
}

void InodeTable::List(Shard& shard, uint64_t nodeid, Entry& entry) {
  if (nodeid == kRootNodeId) return;
  if (entry.reopenable()) {
    entry.slot = shard.open.size();
    shard.open.push_back(nodeid);
    open_count_.fetch_add(1, std::memory_order_relaxed);
  } else {
    entry.slot = shard.pinned.size();
    shard.pinned.push_back(nodeid);
    pinned_count_.fetch_add(1, std::memory_order_relaxed);
    entry.last_use.store(use_ticks_.fetch_add(1), std::memory_order_relaxed);
  }
}

// The last node of the list takes the leaving one's place.
void InodeTable::Unlist(Shard& shard, Entry& entry) {
  if (entry.open == nullptr || entry.open->nodeid == kRootNodeId) return;
  std::vector<uint64_t>& list = entry.reopenable() ? shard.open : shard.pinned;
  const uint64_t last = list.back();
  list[entry.slot] = last;
  list.pop_back();
  if (last != entry.open->nodeid) Find(shard, last)->slot = entry.slot;
  (entry.reopenable() ? open_count_ : pinned_count_).fetch_sub(1, std::memory_order_relaxed);
}

void InodeTable::Close(Shard& shard, Entry& entry, Closing& closing) {
  if (entry.open == nullptr) return;
  Unlist(shard, entry);
  closing.push_back(std::move(entry.open));
  entry.open = nullptr;
}

// Every request that reaches a node comes here: the bit is stored only when it is clear, so a
// hot node's cache line is not written on every request.
void InodeTable::Touch(const Entry& entry) const {
  if (!entry.used.load(std::memory_order_relaxed)) {
    entry.used.store(true, std::memory_order_relaxed);
  }
  // The root is never closed nor named: no tick for it, which every walk would write.
  if (!entry.reopenable() && entry.open != nullptr && entry.open->nodeid != kRootNodeId) {
    entry.last_use.store(use_ticks_.fetch_add(1, std::memory_order_relaxed),
                         std::memory_order_relaxed);
  }
}

size_t InodeTable::GiveBack(size_t count) {
  const size_t open_before = open_count_.load();
  open_budget_.LowerTo(
      std::min(open_limit(), std::max(std::max(open_before, count) - count, kFewestOpen)));
  CloseBeyondLimit();
  const size_t open_after = open_count_.load();
  return open_before > open_after ? open_before - open_after : 0;
}

size_t InodeTable::GiveBackFds(void* table, size_t count) {
  return static_cast<InodeTable*>(table)->GiveBack(count);
}

void InodeTable::CloseBeyondLimit() {
  // Two sweeps of every shard close something: the first clears every bit it passes.
  const size_t attempts = 2 * kShards + 1;
  for (size_t attempt = 0; attempt < attempts && open_count_.load() > budget(); ++attempt) {
    Closing closing;  // declared before the lock: fds close after it is let go
    Shard& shard = shards_[evict_hand_.fetch_add(1, std::memory_order_relaxed) % kShards];
    absl::MutexLock lock(&shard.mutex);
    if (CloseOneUnused(shard, closing)) attempt = 0;
  }
}

bool InodeTable::CloseOneUnused(Shard& shard, Closing& closing) {
  for (size_t step = 0; step < shard.open.size(); ++step) {
    if (shard.hand >= shard.open.size()) shard.hand = 0;
    Entry& entry = *Find(shard, shard.open[shard.hand]);
    if (entry.used.exchange(false, std::memory_order_relaxed)) {
      ++shard.hand;
      continue;
    }
    Close(shard, entry, closing);  // the last node now stands at the hand: it is looked at next
    return true;
  }
  return false;
}

// Rarely called (only with more pinned nodes than the budget): a sort of their use ticks.
std::vector<uint64_t> InodeTable::UnclosableBeyond(size_t keep) {
  std::vector<std::pair<uint64_t, uint64_t>> by_use;  // (last use, node id)
  for (Shard& shard : shards_) {
    absl::ReaderMutexLock lock(&shard.mutex);
    for (const uint64_t nodeid : shard.pinned) {
      by_use.emplace_back(Find(shard, nodeid)->last_use.load(), nodeid);
    }
  }
  std::vector<uint64_t> nodeids;
  if (by_use.size() <= keep) return nodeids;
  std::sort(by_use.begin(), by_use.end());
  for (size_t i = 0; i < by_use.size() - keep; ++i) {
    const uint64_t nodeid = by_use[i].second;
    nodeids.push_back(nodeid);
    // Counts as used now, so that the next call names others while the FORGETs are on the way.
    Shard& shard = ShardOf(nodeid);
    absl::ReaderMutexLock lock(&shard.mutex);
    if (const Entry* entry = Find(shard, nodeid)) Touch(*entry);
  }
  return nodeids;
}

}  // namespace ringfuse::daemon
