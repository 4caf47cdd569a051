// The inode table's names: a node without a handle is reopened by the name it was last found or
// renamed to through the mount, under its parent, which stays in the table while a name is under
// it. All of it under names_mutex_, which the request path of a daemon with handles never takes.
// A name joins a node before its parent counts it, and a parent counts it under its own shard's
// lock, where FORGET looks: so a FORGET that takes no names lock either sees the name, and goes
// for the lock, or dropped the node first, and the name is not given.
#include <fcntl.h>

#include <cassert>

#include "daemon/inodes/inode_table.h"

namespace ringfuse::daemon {

void InodeTable::NameFound(uint64_t nodeid, uint64_t parent, std::string_view name,
                           uint64_t names_moved, bool added) {
  absl::MutexLock names(&names_mutex_);
  // A rename or removal since the lookup resolved the name may have made it stale; a node just
  // made was found by its name now.
  if (!added && names_moved_.load() != names_moved) return;
  Name(nodeid, parent, name);
}

// A name moves the node between its shard's lists while open: one it can be reopened by lets it
// close. The new parent counts the name before the old one lets go of it: the old may be dropped.
void InodeTable::Name(uint64_t nodeid, uint64_t parent, std::string_view name) {
  // The root (reached by a name through a bind mount of SOURCE in itself) is always open.
  if (nodeid == kRootNodeId) return;
  bool has_children;
  {
    Shard& shard = ShardOf(nodeid);
    absl::ReaderMutexLock lock(&shard.mutex);
    const Entry* entry = Find(shard, nodeid);
    if (entry == nullptr || (entry->parent == parent && entry->name == name)) return;
    has_children = entry->named_children > 0;
  }
  // A new node has nothing under it; a node found again under another name may.
  if (has_children && IsAbove(nodeid, parent)) return;
  if (const uint64_t other = NodeIdNamed(parent, name); other != 0) Unname(other);
  std::pair<uint64_t, std::string> old;
  if (!SetName(nodeid, parent, std::string(name), old)) return;
  Closing closing;
  // A parent forgotten while the name was looked up leaves the node without one.
  if (AddChild(parent)) {
    by_name_[{parent, std::string(name)}] = nodeid;
    names_given_.store(true, std::memory_order_release);
  } else {
    std::pair<uint64_t, std::string> unset;
    SetName(nodeid, 0, std::string(), unset);
  }
  if (old.first != 0) {
    names_moved_.fetch_add(1);
    LeaveParent(old.first, old.second, closing);
  }
}

bool InodeTable::SetName(uint64_t nodeid, uint64_t parent, std::string name,
                         std::pair<uint64_t, std::string>& old) {
  Shard& shard = ShardOf(nodeid);
  absl::MutexLock lock(&shard.mutex);
  Entry* entry = Find(shard, nodeid);
  if (entry == nullptr) return false;
  const bool listed = entry->open != nullptr;
  if (listed) Unlist(shard, *entry);
  old = {std::exchange(entry->parent, parent), std::exchange(entry->name, std::move(name))};
  if (listed) List(shard, nodeid, *entry);
  return true;
}

bool InodeTable::AddChild(uint64_t parent) {
  Shard& shard = ShardOf(parent);
  absl::MutexLock lock(&shard.mutex);
  Entry* entry = Find(shard, parent);
  if (entry == nullptr) return false;
  ++entry->named_children;
  return true;
}

void InodeTable::Unname(uint64_t nodeid, const std::shared_ptr<const Inode>& held) {
  Closing closing;
  std::pair<uint64_t, std::string> old;
  {
    Shard& shard = ShardOf(nodeid);
    absl::MutexLock lock(&shard.mutex);
    Entry* entry = Find(shard, nodeid);
    if (entry == nullptr || entry->parent == 0) return;
    const bool listed = entry->open != nullptr;
    if (listed) Unlist(shard, *entry);
    old = {std::exchange(entry->parent, 0), std::exchange(entry->name, std::string())};
    if (listed) List(shard, nodeid, *entry);
    // Closed meanwhile, it could never be reopened now: the fd held across the change stays.
    if (!listed && !entry->reopenable() && held != nullptr && held->nodeid == nodeid) {
      Install(shard, *entry, held);
    }
  }
  names_moved_.fetch_add(1);
  LeaveParent(old.first, old.second, closing);
}

// A parent stays while names are under it, so it is there; dropped, its own parent may follow.
// Iterative: a chain of forgotten directories can be as deep as the tree.
void InodeTable::LeaveParent(uint64_t parent, const std::string& name, Closing& closing) {
  std::pair<uint64_t, std::string> next{parent, name};
  while (next.first != 0) {
    by_name_.erase(next);
    names_given_.store(!by_name_.empty(), std::memory_order_release);
    {
      Shard& shard = ShardOf(next.first);
      absl::MutexLock lock(&shard.mutex);
      Entry* entry = Find(shard, next.first);
      assert(entry != nullptr && entry->named_children > 0);
      if (--entry->named_children > 0 || entry->lookups.load() > 0) return;
    }
    std::pair<uint64_t, std::string> dropped_name;
    if (!DropIfUnused(next.first, closing, dropped_name)) return;
    next = std::move(dropped_name);
  }
}

// Kept while nodes are named under it, to reopen them by; closed unless only its fd holds it.
void InodeTable::ForgetNamed(uint64_t nodeid, Closing& closing) {
  std::pair<uint64_t, std::string> name;
  if (DropIfUnused(nodeid, closing, name)) {
    if (name.first != 0) LeaveParent(name.first, name.second, closing);
    return;
  }
  Shard& shard = ShardOf(nodeid);
  absl::MutexLock lock(&shard.mutex);
  Entry* entry = Find(shard, nodeid);
  if (entry != nullptr && entry->lookups.load() == 0 && entry->reopenable()) {
    Close(shard, *entry, closing);
  }
}

// Whether `nodeid` is `parent` or one of the directories above it, as far as names say: naming a
// node under itself would make a loop of names (a tree changed behind the mount, a bind mount of
// SOURCE in itself), which would keep both nodes forever. Too deep to tell counts as a loop.
bool InodeTable::IsAbove(uint64_t nodeid, uint64_t parent) const {
  constexpr int kDeepest = 4096;
  for (int depth = 0; depth < kDeepest && parent != 0; ++depth) {
    if (parent == nodeid) return true;
    Shard& shard = ShardOf(parent);
    absl::ReaderMutexLock lock(&shard.mutex);
    const Entry* entry = Find(shard, parent);
    if (entry == nullptr) return false;
    parent = entry->parent;
  }
  return parent != 0;
}

// Every UNLINK and RENAME asks; with handles nothing is named, and no key is built for it.
uint64_t InodeTable::NodeIdNamed(uint64_t parent, std::string_view name) const {
  if (by_name_.empty()) return 0;
  auto named = by_name_.find(std::pair(parent, std::string(name)));
  return named == by_name_.end() ? 0 : named->second;
}

void InodeTable::Removed(uint64_t parent, std::string_view name,
                         const std::shared_ptr<const Inode>& held) {
  if (!names_given_.load(std::memory_order_acquire)) return;
  absl::MutexLock names(&names_mutex_);
  if (const uint64_t nodeid = NodeIdNamed(parent, name); nodeid != 0) Unname(nodeid, held);
}

void InodeTable::Renamed(uint64_t old_parent, std::string_view old_name, uint64_t new_parent,
                         std::string_view new_name, bool exchange,
                         const std::shared_ptr<const Inode>& replaced_held) {
  if (!names_given_.load(std::memory_order_acquire)) return;
  absl::MutexLock names(&names_mutex_);
  const uint64_t moved = NodeIdNamed(old_parent, old_name);
  const uint64_t replaced = NodeIdNamed(new_parent, new_name);
  if (replaced != 0) {
    if (exchange) {
      Name(replaced, old_parent, old_name);
    } else {
      Unname(replaced, replaced_held);
    }
  }
  if (moved != 0) Name(moved, new_parent, new_name);
}

std::shared_ptr<const Inode> InodeTable::NodeNamed(uint64_t parent, std::string_view name) {
  if (!names_given_.load(std::memory_order_acquire)) return nullptr;
  uint64_t nodeid;
  {
    absl::ReaderMutexLock names(&names_mutex_);
    nodeid = NodeIdNamed(parent, name);
  }
  if (nodeid == 0) return nullptr;
  base::ErrnoOr<std::shared_ptr<const Inode>> node = Get(nodeid);
  return node.ok() ? *std::move(node) : nullptr;
}

// Nodes named under the old root (no handles) must reopen under it, not under the new one (where
// a file shared by both revisions has other directories above it): the old root's fd stays open
// as a node the kernel never learns of, for as long as names are under it. With every lock held.
void InodeTable::KeepOldRootForItsNames() {
  Entry& root = *Find(ShardOf(kRootNodeId), kRootNodeId);
  if (root.named_children == 0) return;
  base::UniqueFd old_root(::fcntl(root.open->path.get(), F_DUPFD_CLOEXEC, 0));
  if (!old_root.valid()) return;  // out of fds: the names under it answer ESTALE instead
  const uint64_t kept = next_nodeid_.fetch_add(1);
  Shard& kept_shard = ShardOf(kept);
  Entry& entry = kept_shard.nodes[kept];
  entry.dev = root.dev;
  entry.ino = root.ino;
  entry.type = root.type;
  entry.open = std::make_shared<Inode>(Inode{kept, root.dev, root.ino, std::move(old_root)});
  List(kept_shard, kept, entry);
  std::vector<std::pair<std::string, uint64_t>> names;
  for (const auto& [key, nodeid] : by_name_) {
    if (key.first == kRootNodeId) names.emplace_back(key.second, nodeid);
  }
  for (auto& [name, nodeid] : names) {
    by_name_.erase(std::pair(kRootNodeId, name));
    Find(ShardOf(nodeid), nodeid)->parent = kept;
    by_name_[{kept, std::move(name)}] = nodeid;
  }
  entry.named_children = std::exchange(root.named_children, 0);
}

}  // namespace ringfuse::daemon
