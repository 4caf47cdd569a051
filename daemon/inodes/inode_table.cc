#include "daemon/inodes/inode_table.h"

#include <fcntl.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "absl/hash/hash.h"
#include "daemon/inodes/fd_room.h"

namespace ringfuse::daemon {

bool IsPlainName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(std::string_view("/\0", 2)) == std::string_view::npos;
}

// A node beyond the budget costs a reopen (open_by_handle_at, name_to_handle_at, fstat, close)
// at every lookup of a working set larger than the budget: CLOCK, like LRU, misses every time on
// a walk that cycles through more nodes than it keeps. So nodes keep most of the fd limit (which
// main.cc raised to the hard one): all but an eighth of it, or all but 1024 fds where that leaves
// more, yet at least a quarter. What cannot give fds back (clients' open files, lock owners, nodes
// only FORGET closes, the transport) needs room in numbers, not only as a share; when it runs out
// anyway, its open takes fds back from the nodes (fd_room.h). The cap bounds the backing inodes
// the daemon pins in the kernel's memory (one dentry and inode each).
size_t InodeTable::DefaultOpenLimit() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return kMostOpen;
  }
  return OpenLimitFor(limit.rlim_cur);
}

size_t InodeTable::OpenLimitFor(size_t fd_limit) {
  constexpr size_t kReservedFds = 1024;
  const size_t reserved = std::min(std::max(fd_limit / 8, kReservedFds), fd_limit - fd_limit / 4);
  return std::clamp<size_t>(fd_limit - reserved, kFewestOpen, kMostOpen);
}

InodeTable::InodeTable(base::UniqueFd root, size_t open_limit, absl::Duration lowered_for)
    : handles_(root.get()), open_budget_(open_limit, lowered_for) {
  {
    AllLocked lock(*this);
    // The root is never forgotten: one lookup that no FORGET takes away.
    shards_[kRootNodeId % kShards].nodes[kRootNodeId].lookups = 1;
    ServeAsRoot(std::move(root));
  }
  LendFds(&InodeTable::GiveBackFds, this);  // outside the table's locks, which lending takes
}

InodeTable::~InodeTable() { StopLendingFds(this); }

InodeTable::BackingShard& InodeTable::BackingOf(dev_t dev, ino_t ino) const {
  return backing_[absl::Hash<std::pair<dev_t, ino_t>>{}({dev, ino}) % kShards];
}

InodeTable::Entry* InodeTable::Find(Shard& shard, uint64_t nodeid) {
  auto found = shard.nodes.find(nodeid);
  return found == shard.nodes.end() ? nullptr : &found->second;
}

// The root stays open: every walk starts there. With every lock held.
void InodeTable::ServeAsRoot(base::UniqueFd root) {
  struct stat st {};
  ::fstat(root.get(), &st);  // an open directory: fstat has nothing left to fail on
  Entry& entry = *Find(ShardOf(kRootNodeId), kRootNodeId);
  if (entry.open != nullptr) {
    auto& old_shard = BackingOf(entry.dev, entry.ino).nodeids;
    auto old = old_shard.find({entry.dev, entry.ino});
    if (old != old_shard.end() && old->second == kRootNodeId) old_shard.erase(old);
  }
  BackingOf(st.st_dev, st.st_ino).nodeids[{st.st_dev, st.st_ino}] = kRootNodeId;
  entry.dev = st.st_dev;
  entry.ino = st.st_ino;
  entry.type = st.st_mode & S_IFMT;
  entry.open = std::make_shared<Inode>(Inode{kRootNodeId, st.st_dev, st.st_ino, std::move(root)});
}

base::Errno InodeTable::Lookup(uint64_t parent, std::string_view name, Found& found,
                               bool maybe_open) {
  if (!IsPlainName(name)) return base::Errno(EINVAL);
  const uint64_t names_moved = names_moved_.load();
  if (!Begin(parent, name)) return base::Errno(ESTALE);
  const base::ErrnoOr<std::shared_ptr<const Inode>> directory = Get(parent);
  if (!directory.ok()) return directory.error();
  const int directory_fd = (*directory)->path.get();
  const std::string name_string(name);
  bool unnamed = false;
  bool added = false;
  // One stat finds a node already open: most lookups (a cache-off stat storm looks every name
  // up again) cost it alone, instead of an open, a stat, a handle and a close.
  if (maybe_open) {
    const base::Errno stat = base::Errno::OfCall(
        ::fstatat(directory_fd, name_string.c_str(), &found.attr, AT_SYMLINK_NOFOLLOW));
    if (!stat.ok()) return stat;
  }
  if (!maybe_open || !FoundOpen(found, unnamed)) {
    base::ErrnoOr<base::UniqueFd> path = OpenMakingRoom([&] {
      return base::FdOfCall(
          ::openat(directory_fd, name_string.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    });
    if (!path.ok()) return path.error();
    const base::Errno stat = base::Errno::OfCall(::fstat(path->get(), &found.attr));
    if (!stat.ok()) return stat;
    std::string handle = handles_.openable() ? handles_.HandleOf(path->get()) : std::string();
    added = FoundOrAdded(*std::move(path), std::move(handle), parent, name, found, unnamed);
  }
  // Named, a node joins those the budget closes.
  if (unnamed) NameFound(found.inode->nodeid, parent, name, names_moved, added);
  CloseBeyondLimit();
  return base::Errno();
}

// Counts the lookup and notes its name before resolving it, under a tracking shard's lock that
// the root's switch holds too: a lookup either is reported by ReplaceRoot or sees the new root.
bool InodeTable::Begin(uint64_t parent, std::string_view name) {
  lookups_served_.Add();
  const size_t limit = looked_up_.limit();
  if (limit == 0) return true;  // Get(parent) tells a forgotten parent
  {
    Shard& shard = ShardOf(parent);
    absl::ReaderMutexLock lock(&shard.mutex);
    if (Find(shard, parent) == nullptr) return false;  // whose names are not tracked
  }
  looked_up_.Note(parent, name, limit);
  return true;
}

void InodeTable::CountLookup(uint64_t nodeid, Entry& entry) {
  entry.lookups.fetch_add(1, std::memory_order_relaxed);
  Count(nodeid, entry);
  Touch(entry);
}

// An open node's fd keeps its inode, so (st_dev, st_ino) is that inode: nothing else to check.
// Reader locks only, unless a recorder must see this node's counts in order.
bool InodeTable::FoundOpen(Found& found, bool& unnamed) {
  BackingShard& backing = BackingOf(found.attr.st_dev, found.attr.st_ino);
  absl::ReaderMutexLock backing_lock(&backing.mutex);
  auto known = backing.nodeids.find({found.attr.st_dev, found.attr.st_ino});
  if (known == backing.nodeids.end()) return false;
  const uint64_t nodeid = known->second;
  Shard& shard = ShardOf(nodeid);
  const bool recording = recorder_.load(std::memory_order_relaxed) != nullptr;
  recording ? shard.mutex.Lock() : shard.mutex.ReaderLock();
  Entry* entry = Find(shard, nodeid);
  const bool open = entry != nullptr && entry->open != nullptr &&
                    entry->type == (found.attr.st_mode & S_IFMT) &&
                    (recording || recorder_.load(std::memory_order_relaxed) == nullptr);
  if (open) {
    CountLookup(nodeid, *entry);
    unnamed = entry->handle.empty();
    found.inode = entry->open;
  }
  recording ? shard.mutex.Unlock() : shard.mutex.ReaderUnlock();
  return open;
}

// An inode number reused since a node was made names another inode: a new node for it.
bool InodeTable::FoundOrAdded(base::UniqueFd path, std::string handle, uint64_t parent,
                              std::string_view name, Found& found, bool& unnamed) {
  BackingShard& backing = BackingOf(found.attr.st_dev, found.attr.st_ino);
  absl::MutexLock backing_lock(&backing.mutex);
  if (auto known = backing.nodeids.find({found.attr.st_dev, found.attr.st_ino});
      known != backing.nodeids.end()) {
    Shard& shard = ShardOf(known->second);
    absl::MutexLock lock(&shard.mutex);
    Entry* entry = Find(shard, known->second);
    if (entry != nullptr && (SameInode(*entry, handle, found.attr, parent, name) ||
                             ProvenByLookup(shard, known->second, *entry, handle, found.attr))) {
      CountLookup(known->second, *entry);
      unnamed = entry->handle.empty();
      if (entry->open == nullptr) {
        Install(shard, *entry,
                std::make_shared<Inode>(
                    Inode{known->second, found.attr.st_dev, found.attr.st_ino, std::move(path)}));
      }
      found.inode = entry->open;
      return false;  // the new O_PATH fd closes, unless the node had none open
    }
  }
  unnamed = handle.empty();
  AddNode(std::move(path), std::move(handle), found);
  return true;
}

void InodeTable::AddNode(base::UniqueFd path, std::string handle, Found& found) {
  const uint64_t nodeid = next_nodeid_.fetch_add(1);
  auto inode =
      std::make_shared<Inode>(Inode{nodeid, found.attr.st_dev, found.attr.st_ino, std::move(path)});
  BackingOf(found.attr.st_dev, found.attr.st_ino).nodeids[{found.attr.st_dev, found.attr.st_ino}] =
      nodeid;
  Shard& shard = ShardOf(nodeid);
  absl::MutexLock lock(&shard.mutex);
  Entry& entry = shard.nodes[nodeid];
  entry.dev = found.attr.st_dev;
  entry.ino = found.attr.st_ino;
  entry.type = found.attr.st_mode & S_IFMT;
  entry.handle = std::move(handle);
  entry.lookups = 1;
  // Before the reply that names the node: the kernel never knows a node the recorder does not.
  NodeRecorder* recorder = recorder_.load(std::memory_order_relaxed);
  entry.recorded = recorder != nullptr &&
                   recorder->Added(nodeid, entry.dev, entry.ino, entry.type, entry.handle, 1);
  found.inode = inode;
  Install(shard, entry, std::move(inode));
}

// An open node's fd keeps its inode, so its number cannot have been reused; a handle tells.
// Without either, a closed node is taken to be the inode found only under the name it was last
// found by: under another name its number may have been reused behind the mount's back (a hard
// link gets a node of its own instead). A number reused under the same name cannot be told.
bool InodeTable::SameInode(const Entry& entry, const std::string& handle, const struct stat& attr,
                           uint64_t parent, std::string_view name) {
  if (entry.type != (attr.st_mode & S_IFMT)) return false;
  if (!handle.empty() && !entry.handle.empty()) return handle == entry.handle;
  return entry.open != nullptr || (entry.parent == parent && entry.name == name);
}

// The lookup reached the inode by a name in SOURCE and made the same handle the dead daemon
// recorded: the record was true, and the handle is as good as one this table made. Before it is
// installed, so that the node joins those the budget closes and reopens.
bool InodeTable::ProvenByLookup(Shard& shard, uint64_t nodeid, Entry& entry,
                                const std::string& handle, const struct stat& attr) {
  auto unproven = shard.unproven.find(nodeid);
  if (unproven == shard.unproven.end() || handle.empty() || unproven->second != handle ||
      entry.type != (attr.st_mode & S_IFMT)) {
    return false;
  }
  entry.handle = std::move(unproven->second);
  shard.unproven.erase(unproven);
  return true;
}

base::Errno InodeTable::Adopt(base::UniqueFd path, Found& found) {
  const base::Errno stat = base::Errno::OfCall(::fstat(path.get(), &found.attr));
  if (!stat.ok()) return stat;
  BackingShard& backing = BackingOf(found.attr.st_dev, found.attr.st_ino);
  absl::MutexLock lock(&backing.mutex);
  // Kept open: an O_TMPFILE inode has no links, which some filesystems' handles do not reach.
  AddNode(std::move(path), std::string(), found);
  return base::Errno();
}

// The common FORGET leaves lookups behind: one atomic subtraction under its shard's reader lock,
// so that a directory every lookup walks through is not locked for writing by each FORGET of it.
// The last lookup's takes the writer lock and drops the node there; a node that names or is
// named goes to the names lock.
void InodeTable::Forget(uint64_t nodeid, uint64_t count) {
  if (nodeid == kRootNodeId || ForgetSome(nodeid, count)) return;
  Closing closing;
  std::optional<std::pair<dev_t, ino_t>> dropped;
  {
    Shard& shard = ShardOf(nodeid);
    absl::MutexLock lock(&shard.mutex);
    auto entry = shard.nodes.find(nodeid);
    if (entry == shard.nodes.end()) return;
    const uint64_t lookups = entry->second.lookups.load(std::memory_order_relaxed);
    entry->second.lookups.store(lookups > count ? lookups - count : 0, std::memory_order_relaxed);
    Count(nodeid, entry->second);
    if (lookups > count) return;
    if (entry->second.parent == 0 && entry->second.named_children == 0) {
      dropped = Erase(shard, entry, closing, nullptr);
    }
  }
  if (dropped.has_value()) return Unserve(nodeid, *dropped);
  absl::MutexLock names(&names_mutex_);
  ForgetNamed(nodeid, closing);
}

bool InodeTable::ForgetSome(uint64_t nodeid, uint64_t count) {
  if (recorder_.load(std::memory_order_relaxed) != nullptr) return false;
  Shard& shard = ShardOf(nodeid);
  absl::ReaderMutexLock lock(&shard.mutex);
  Entry* entry = Find(shard, nodeid);
  // A recorder set meanwhile (with every shard locked) must see the count in order.
  if (entry == nullptr || recorder_.load(std::memory_order_relaxed) != nullptr) return false;
  uint64_t lookups = entry->lookups.load(std::memory_order_relaxed);
  while (lookups > count) {
    if (entry->lookups.compare_exchange_weak(lookups, lookups - count, std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

// Requests in flight may still hold the inode; its fd closes when the last one lets go.
std::pair<dev_t, ino_t> InodeTable::Erase(Shard& shard, NodeMap::iterator entry, Closing& closing,
                                          std::pair<uint64_t, std::string>* name) {
  Entry& dropped = entry->second;
  Close(shard, dropped, closing);
  NodeRecorder* recorder = recorder_.load(std::memory_order_relaxed);
  if (recorder != nullptr) recorder->Dropped(entry->first, dropped.recorded);
  const std::pair<dev_t, ino_t> backing{dropped.dev, dropped.ino};
  if (name != nullptr) *name = {dropped.parent, std::move(dropped.name)};
  shard.unproven.erase(entry->first);
  shard.nodes.erase(entry);
  return backing;
}

// Only the node's own mapping: a newer node of a reused inode number keeps its.
void InodeTable::Unserve(uint64_t nodeid, std::pair<dev_t, ino_t> backing) {
  BackingShard& shard = BackingOf(backing.first, backing.second);
  absl::MutexLock lock(&shard.mutex);
  auto serving = shard.nodeids.find(backing);
  if (serving != shard.nodeids.end() && serving->second == nodeid) shard.nodeids.erase(serving);
}

bool InodeTable::DropIfUnused(uint64_t nodeid, Closing& closing,
                              std::pair<uint64_t, std::string>& name) {
  std::pair<dev_t, ino_t> backing;
  {
    Shard& shard = ShardOf(nodeid);
    absl::MutexLock lock(&shard.mutex);
    auto entry = shard.nodes.find(nodeid);
    if (entry == shard.nodes.end() || entry->second.lookups.load() > 0 ||
        entry->second.named_children > 0) {
      return false;
    }
    backing = Erase(shard, entry, closing, &name);
  }
  Unserve(nodeid, backing);
  return true;
}

// A closed node is reopened by handle, or under its parent, which may have to be reopened first:
// the chain of closed nodes up to one that is open or has a handle is walked, then opened from
// the top down, outside the locks. A rename through the mount meanwhile makes a name of the chain
// stale: the walk is made again, a few times at most.
base::ErrnoOr<std::shared_ptr<const Inode>> InodeTable::Get(uint64_t nodeid) {
  std::optional<Closed> by_handle;
  {
    Shard& shard = ShardOf(nodeid);
    absl::ReaderMutexLock lock(&shard.mutex);
    const Entry* entry = Find(shard, nodeid);
    if (entry == nullptr) return base::Errno(ESTALE);
    if (entry->open != nullptr) {
      Touch(*entry);
      return entry->open;
    }
    if (!entry->handle.empty()) {
      by_handle = Closed{nodeid, entry->dev, entry->ino, entry->type, entry->handle, ""};
    }
  }
  // A handle reaches the inode whatever its names: no chain, and not the names lock.
  base::ErrnoOr<std::shared_ptr<const Inode>> inode =
      by_handle.has_value() ? Reopen(*by_handle, nullptr) : ReopenByNames(nodeid);
  CloseBeyondLimit();
  return inode;
}

base::ErrnoOr<std::shared_ptr<const Inode>> InodeTable::ReopenByNames(uint64_t nodeid) {
  constexpr int kWalks = 3;
  for (int walk = 1;; ++walk) {
    uint64_t names_moved;
    base::ErrnoOr<std::shared_ptr<const Inode>> inode = WalkAndReopen(nodeid, names_moved);
    if (inode.ok() || inode.error() != base::Errno(ESTALE) || walk == kWalks ||
        names_moved_.load() == names_moved) {
      return inode;
    }
  }
}

base::ErrnoOr<std::shared_ptr<const Inode>> InodeTable::WalkAndReopen(uint64_t nodeid,
                                                                      uint64_t& names_moved) {
  std::vector<Closed> chain;
  std::shared_ptr<const Inode> top;
  {
    absl::ReaderMutexLock names(&names_mutex_);
    names_moved = names_moved_.load();
    if (!ClosedChain(nodeid, chain, top)) return base::Errno(ESTALE);
  }
  for (auto closed = chain.rbegin(); closed != chain.rend(); ++closed) {
    base::ErrnoOr<std::shared_ptr<const Inode>> reopened = Reopen(*closed, top.get());
    if (!reopened.ok()) return reopened;
    top = *std::move(reopened);
  }
  return top;
}

// Iterative, and bounded against a loop of names.
bool InodeTable::ClosedChain(uint64_t nodeid, std::vector<Closed>& chain,
                             std::shared_ptr<const Inode>& top) {
  constexpr size_t kDeepest = 4096;
  for (uint64_t id = nodeid;;) {
    Shard& shard = ShardOf(id);
    absl::ReaderMutexLock lock(&shard.mutex);
    const Entry* entry = Find(shard, id);
    if (entry == nullptr ||
        (entry->open == nullptr && (!entry->reopenable() || chain.size() >= kDeepest))) {
      return false;
    }
    if (entry->open != nullptr) {
      Touch(*entry);
      top = entry->open;
      return true;
    }
    chain.push_back(Closed{id, entry->dev, entry->ino, entry->type, entry->handle, entry->name});
    if (!entry->handle.empty()) return true;
    id = entry->parent;
  }
}

base::ErrnoOr<std::shared_ptr<const Inode>> InodeTable::Reopen(const Closed& closed,
                                                               const Inode* parent) {
  base::ErrnoOr<base::UniqueFd> path = OpenMakingRoom([&] {
    if (!closed.handle.empty()) return handles_.Open(closed.handle);
    return base::FdOfCall(
        ::openat(parent->path.get(), closed.name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  });
  if (!path.ok()) {
    // Its name is gone: renamed or removed meanwhile.
    return path.error() == base::Errno(ENOENT) ? base::Errno(ESTALE) : path.error();
  }
  struct stat st {};
  const base::Errno stat = base::Errno::OfCall(::fstat(path->get(), &st));
  if (!stat.ok()) return stat;
  if (st.st_dev != closed.dev || st.st_ino != closed.ino || (st.st_mode & S_IFMT) != closed.type) {
    return base::Errno(ESTALE);  // a handle or name that reaches anything else is not this node's
  }
  auto inode =
      std::make_shared<Inode>(Inode{closed.nodeid, closed.dev, closed.ino, *std::move(path)});
  Shard& shard = ShardOf(closed.nodeid);
  absl::MutexLock lock(&shard.mutex);
  Entry* entry = Find(shard, closed.nodeid);
  // Forgotten meanwhile: the request still gets its fd, which closes when it is done.
  if (entry == nullptr) return inode;
  if (entry->open != nullptr) return entry->open;  // reopened by another request
  Install(shard, *entry, inode);
  return inode;
}

// Lookups wait for this only as long as it takes to copy the node ids: the names leave in swaps.
KernelCache InodeTable::ReplaceRoot(base::UniqueFd root) {
  KernelCache cache;
  AllLocked lock(*this);
  KeepOldRootForItsNames();
  ServeAsRoot(std::move(root));
  // A lookup under the old root may name its node after this: its name is stale now.
  names_moved_.fetch_add(1);
  for (Shard& shard : shards_) {
    for (const auto& [nodeid, entry] : shard.nodes) {
      if (entry.lookups > 0) cache.nodeids.push_back(nodeid);  // not those only kept as parents
    }
  }
  cache.entries_complete = looked_up_.Take(cache.entries);
  return cache;
}

uint64_t InodeTable::lookups_served() const { return lookups_served_.Sum(); }

size_t InodeTable::size() const {
  size_t size = 0;
  for (Shard& shard : shards_) {
    absl::ReaderMutexLock lock(&shard.mutex);
    size += shard.nodes.size();
  }
  return size;
}

size_t InodeTable::open_count() const {
  return open_count_.load() + pinned_count_.load() + 1;  // the root besides
}

size_t InodeTable::pinned_count() const {
  return pinned_count_.load(std::memory_order_relaxed) + 1;  // the root besides
}

uint64_t InodeTable::LookupCount(uint64_t nodeid) const {
  Shard& shard = ShardOf(nodeid);
  absl::ReaderMutexLock lock(&shard.mutex);
  const Entry* entry = Find(shard, nodeid);
  return entry == nullptr ? 0 : entry->lookups.load();
}

}  // namespace ringfuse::daemon
