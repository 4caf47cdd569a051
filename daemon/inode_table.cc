#include "daemon/inode_table.h"

#include <fcntl.h>
#include <sys/resource.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <iterator>
#include <string>

namespace ringfuse::daemon {

bool IsPlainName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(std::string_view("/\0", 2)) == std::string_view::npos;
}

size_t InodeTable::DefaultOpenLimit() {
  constexpr size_t kFewest = 16;
  constexpr size_t kMost = 16384;  // enough for the trees a cache walk touches at once
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kMost;
  return std::clamp<size_t>(limit.rlim_cur / 4, kFewest, kMost);
}

InodeTable::InodeTable(internal::UniqueFd root, size_t open_limit)
    : handles_(root.get()), open_limit_(open_limit) {
  absl::MutexLock lock(&mutex_);
  // The root is never forgotten: one lookup that no FORGET takes away.
  by_nodeid_[kRootNodeId].lookups = 1;
  ServeAsRoot(std::move(root));
}

// The root stays open: every walk starts there.
void InodeTable::ServeAsRoot(internal::UniqueFd root) {
  struct stat st {};
  ::fstat(root.get(), &st);  // an open directory: fstat has nothing left to fail on
  Entry& entry = by_nodeid_[kRootNodeId];
  if (entry.open != nullptr) {
    auto old = by_backing_.find({entry.dev, entry.ino});
    if (old != by_backing_.end() && old->second == kRootNodeId) by_backing_.erase(old);
  }
  by_backing_[{st.st_dev, st.st_ino}] = kRootNodeId;
  entry.dev = st.st_dev;
  entry.ino = st.st_ino;
  entry.type = st.st_mode & S_IFMT;
  entry.open = std::make_shared<Inode>(Inode{kRootNodeId, st.st_dev, st.st_ino, std::move(root)});
}

void InodeTable::AddNode(internal::UniqueFd path, std::string handle, uint64_t parent,
                         std::string_view name, Found& found, Closing& closing) {
  const uint64_t nodeid = next_nodeid_++;
  auto inode =
      std::make_shared<Inode>(Inode{nodeid, found.attr.st_dev, found.attr.st_ino, std::move(path)});
  by_backing_[{found.attr.st_dev, found.attr.st_ino}] = nodeid;
  Entry& entry = by_nodeid_[nodeid];
  entry.dev = found.attr.st_dev;
  entry.ino = found.attr.st_ino;
  entry.type = found.attr.st_mode & S_IFMT;
  entry.handle = std::move(handle);
  entry.lookups = 1;
  // Before the reply that names the node: the kernel never knows a node the recorder does not.
  entry.recorded = recorder_ != nullptr && recorder_->Added(nodeid, entry.dev, entry.ino,
                                                            entry.type, entry.handle, 1);
  if (entry.handle.empty() && parent != 0) Name(nodeid, entry, parent, name);
  found.inode = inode;
  Install(entry, std::move(inode), closing);
}

void InodeTable::Install(Entry& entry, std::shared_ptr<const Inode> inode, Closing& closing) {
  entry.open = std::move(inode);
  List(entry.open->nodeid, entry);
  CloseBeyondLimit(closing);
}

void InodeTable::List(uint64_t nodeid, Entry& entry) {
  if (nodeid == kRootNodeId) return;
  std::list<uint64_t>& list = ListOf(entry);
  list.push_front(nodeid);
  entry.recent = list.begin();
  pinned_size_.store(pinned_.size(), std::memory_order_relaxed);
}

void InodeTable::Unlist(Entry& entry) {
  ListOf(entry).erase(entry.recent);
  pinned_size_.store(pinned_.size(), std::memory_order_relaxed);
}

// A name moves the node between the lists while open: one it can be reopened by lets it close.
// The new parent counts the name before the old one lets go of it: the old may be dropped then.
void InodeTable::Name(uint64_t nodeid, Entry& entry, uint64_t parent, std::string_view name) {
  // The root (reached by a name through a bind mount of SOURCE in itself) is always open.
  if (nodeid == kRootNodeId || (entry.parent == parent && entry.name == name)) return;
  // A new node has nothing under it; a node found again under another name may.
  if (entry.named_children > 0 && IsAbove(nodeid, parent)) return;
  if (const uint64_t other = NodeIdNamed(parent, name); other != 0) {
    Unname(other, by_nodeid_[other]);
  }
  const bool listed = entry.open != nullptr;
  if (listed) Unlist(entry);
  const uint64_t old_parent = std::exchange(entry.parent, 0);
  const std::string old_name = std::exchange(entry.name, std::string());
  // A parent forgotten while the name was looked up leaves the node without one.
  if (auto parent_entry = by_nodeid_.find(parent); parent_entry != by_nodeid_.end()) {
    ++parent_entry->second.named_children;
    entry.parent = parent;
    entry.name = std::string(name);
    by_name_[{parent, entry.name}] = nodeid;
  }
  if (listed) List(nodeid, entry);
  if (old_parent != 0) ++names_moved_;
  if (old_parent != 0 && LeaveParent(old_parent, old_name)) DropUnderLock(old_parent);
}

void InodeTable::Unname(uint64_t nodeid, Entry& entry, const std::shared_ptr<const Inode>& held) {
  if (entry.parent == 0) return;
  const bool listed = entry.open != nullptr;
  if (listed) Unlist(entry);
  const uint64_t old_parent = std::exchange(entry.parent, 0);
  const std::string old_name = std::exchange(entry.name, std::string());
  ++names_moved_;
  if (listed) List(nodeid, entry);
  // Closed meanwhile, it could never be reopened now: the fd held across the change stays.
  Closing closing;
  if (!listed && !entry.reopenable() && held != nullptr && held->nodeid == nodeid) {
    Install(entry, held, closing);
  }
  if (LeaveParent(old_parent, old_name)) Drop(old_parent, closing);
}

// A parent stays while names are under it (Forget), so it is there.
bool InodeTable::LeaveParent(uint64_t parent, const std::string& name) {
  by_name_.erase(std::pair(parent, name));
  auto parent_entry = by_nodeid_.find(parent);
  assert(parent_entry != by_nodeid_.end() && parent_entry->second.named_children > 0);
  return --parent_entry->second.named_children == 0 && parent_entry->second.lookups == 0;
}

// Rarely closes anything: a forgotten parent was closed already unless it had no name either.
void InodeTable::DropUnderLock(uint64_t nodeid) {
  Closing closing;
  Drop(nodeid, closing);
}

// Whether `nodeid` is `parent` or one of the directories above it, as far as names say: naming a
// node under itself would make a loop of names (a tree changed behind the mount, a bind mount of
// SOURCE in itself), which would keep both nodes forever. Too deep to tell counts as a loop.
bool InodeTable::IsAbove(uint64_t nodeid, uint64_t parent) const {
  constexpr int kDeepest = 4096;
  for (int depth = 0; depth < kDeepest && parent != 0; ++depth) {
    if (parent == nodeid) return true;
    auto entry = by_nodeid_.find(parent);
    if (entry == by_nodeid_.end()) return false;
    parent = entry->second.parent;
  }
  return parent != 0;
}

// Every UNLINK and RENAME asks; with handles nothing is named, and no key is built for it.
uint64_t InodeTable::NodeIdNamed(uint64_t parent, std::string_view name) const {
  if (by_name_.empty()) return 0;
  auto named = by_name_.find(std::pair(parent, std::string(name)));
  return named == by_name_.end() ? 0 : named->second;
}

void InodeTable::Touch(uint64_t nodeid, Entry& entry) {
  if (nodeid == kRootNodeId || entry.open == nullptr) return;
  std::list<uint64_t>& list = ListOf(entry);
  list.splice(list.begin(), list, entry.recent);
}

std::vector<uint64_t> InodeTable::UnclosableBeyond(size_t keep) {
  absl::MutexLock lock(&mutex_);
  std::vector<uint64_t> nodeids;
  while (pinned_.size() > keep + nodeids.size()) {
    nodeids.push_back(pinned_.back());
    pinned_.splice(pinned_.begin(), pinned_, std::prev(pinned_.end()));
  }
  return nodeids;
}

void InodeTable::CloseBeyondLimit(Closing& closing) {
  while (recent_.size() > open_limit_) Close(by_nodeid_[recent_.back()], closing);
}

void InodeTable::Close(Entry& entry, Closing& closing) {
  if (entry.open == nullptr) return;
  Unlist(entry);
  closing.push_back(std::move(entry.open));
  entry.open = nullptr;
}

// An open node's fd keeps its inode, so its number cannot have been reused; a handle tells.
// Without either, a closed node is taken to be the inode found only under the name it was last
// found by: under another name its number may have been reused behind the mount's back (a hard
// link gets a node of its own instead). A number reused under the same name cannot be told.
bool InodeTable::SameInode(const Entry& entry, const std::string& handle, const struct stat& attr,
                           uint64_t parent, std::string_view name) const {
  if (entry.type != (attr.st_mode & S_IFMT)) return false;
  if (!handle.empty() && !entry.handle.empty()) return handle == entry.handle;
  return entry.open != nullptr || (entry.parent == parent && entry.name == name);
}

int InodeTable::Lookup(uint64_t parent, std::string_view name, Found& found, bool maybe_open) {
  if (!IsPlainName(name)) return EINVAL;
  uint64_t names_moved;
  if (!Begin(parent, name, names_moved)) return ESTALE;
  const std::shared_ptr<const Inode> directory = Get(parent);
  if (directory == nullptr) return errno;
  const std::string name_string(name);
  // One stat finds a node already open: most lookups (a cache-off stat storm looks every name
  // up again) cost it alone, instead of an open, a stat, a handle and a close.
  if (maybe_open) {
    if (::fstatat(directory->path.get(), name_string.c_str(), &found.attr, AT_SYMLINK_NOFOLLOW) !=
        0) {
      return errno;
    }
    if (FoundOpen(parent, name, names_moved, found)) return 0;
  }
  internal::UniqueFd path(
      ::openat(directory->path.get(), name_string.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!path.valid() || ::fstat(path.get(), &found.attr) != 0) return errno;
  std::string handle = handles_.openable() ? handles_.HandleOf(path.get()) : std::string();

  Closing closing;  // declared before the lock: fds close after it is let go
  absl::MutexLock lock(&mutex_);
  if (auto known = by_backing_.find({found.attr.st_dev, found.attr.st_ino});
      known != by_backing_.end()) {
    Entry& entry = by_nodeid_[known->second];
    // An inode number reused since the node was made names another inode: a new node for it.
    if (SameInode(entry, handle, found.attr, parent, name)) {
      ++entry.lookups;
      Count(known->second, entry);
      // A rename or removal since this lookup resolved the name may have made it stale.
      if (entry.handle.empty() && names_moved_ == names_moved) {
        Name(known->second, entry, parent, name);
      }
      if (entry.open == nullptr) {
        Install(entry,
                std::make_shared<Inode>(
                    Inode{known->second, found.attr.st_dev, found.attr.st_ino, std::move(path)}),
                closing);
      } else {
        Touch(known->second, entry);
      }
      found.inode = entry.open;
      return 0;  // the new O_PATH fd closes, unless the node had none open
    }
  }
  AddNode(std::move(path), std::move(handle), parent, name, found, closing);
  return 0;
}

// An open node's fd keeps its inode, so (st_dev, st_ino) is that inode: nothing else to check.
bool InodeTable::FoundOpen(uint64_t parent, std::string_view name, uint64_t names_moved,
                           Found& found) {
  absl::MutexLock lock(&mutex_);
  auto known = by_backing_.find({found.attr.st_dev, found.attr.st_ino});
  if (known == by_backing_.end()) return false;
  Entry& entry = by_nodeid_[known->second];
  if (entry.open == nullptr || entry.type != (found.attr.st_mode & S_IFMT)) return false;
  ++entry.lookups;
  Count(known->second, entry);
  if (entry.handle.empty() && names_moved_ == names_moved) Name(known->second, entry, parent, name);
  Touch(known->second, entry);
  found.inode = entry.open;
  return true;
}

int InodeTable::Adopt(internal::UniqueFd path, Found& found) {
  if (!path.valid() || ::fstat(path.get(), &found.attr) != 0) return errno;
  Closing closing;
  absl::MutexLock lock(&mutex_);
  // Kept open: an O_TMPFILE inode has no links, which some filesystems' handles do not reach.
  AddNode(std::move(path), std::string(), 0, "", found, closing);
  return 0;
}

void InodeTable::Forget(uint64_t nodeid, uint64_t count) {
  if (nodeid == kRootNodeId) return;
  Closing closing;
  absl::MutexLock lock(&mutex_);
  auto entry = by_nodeid_.find(nodeid);
  if (entry == by_nodeid_.end()) return;
  if (entry->second.lookups > count) {
    entry->second.lookups -= count;
    Count(nodeid, entry->second);
    return;
  }
  entry->second.lookups = 0;
  Count(nodeid, entry->second);
  // Kept while nodes are named under it, to reopen them by; closed unless only its fd holds it.
  if (entry->second.named_children > 0) {
    if (entry->second.reopenable()) Close(entry->second, closing);
    return;
  }
  Drop(nodeid, closing);
}

// Iterative: a chain of forgotten directories can be as deep as the tree.
void InodeTable::Drop(uint64_t nodeid, Closing& closing) {
  while (nodeid != 0) {
    auto entry = by_nodeid_.find(nodeid);
    Entry& dropped = entry->second;
    // Requests in flight may still hold the inode; its fd closes when the last one lets go.
    Close(dropped, closing);
    auto backing = by_backing_.find({dropped.dev, dropped.ino});
    if (backing != by_backing_.end() && backing->second == nodeid) by_backing_.erase(backing);
    if (recorder_ != nullptr) recorder_->Dropped(nodeid, dropped.recorded);
    const uint64_t parent = dropped.parent;
    const std::string name = std::move(dropped.name);
    by_nodeid_.erase(entry);
    nodeid = parent != 0 && LeaveParent(parent, name) ? parent : 0;
  }
}

void InodeTable::Removed(uint64_t parent, std::string_view name,
                         const std::shared_ptr<const Inode>& held) {
  absl::MutexLock lock(&mutex_);
  if (const uint64_t nodeid = NodeIdNamed(parent, name); nodeid != 0) {
    Unname(nodeid, by_nodeid_[nodeid], held);
  }
}

void InodeTable::Renamed(uint64_t old_parent, std::string_view old_name, uint64_t new_parent,
                         std::string_view new_name, bool exchange,
                         const std::shared_ptr<const Inode>& replaced_held) {
  absl::MutexLock lock(&mutex_);
  const uint64_t moved = NodeIdNamed(old_parent, old_name);
  const uint64_t replaced = NodeIdNamed(new_parent, new_name);
  if (replaced != 0) {
    Entry& entry = by_nodeid_[replaced];
    if (exchange) {
      Name(replaced, entry, old_parent, old_name);
    } else {
      Unname(replaced, entry, replaced_held);
    }
  }
  if (moved != 0) Name(moved, by_nodeid_[moved], new_parent, new_name);
}

std::shared_ptr<const Inode> InodeTable::NodeNamed(uint64_t parent, std::string_view name) {
  uint64_t nodeid;
  {
    absl::MutexLock lock(&mutex_);
    nodeid = NodeIdNamed(parent, name);
  }
  return nodeid == 0 ? nullptr : Get(nodeid);
}

// Counts the lookup and notes its name before resolving it, under the same lock as the root's
// switch: a lookup either is reported by ReplaceRoot or sees the new root.
bool InodeTable::Begin(uint64_t parent, std::string_view name, uint64_t& names_moved) {
  absl::MutexLock lock(&mutex_);
  ++lookups_served_;
  names_moved = names_moved_;
  if (!by_nodeid_.contains(parent)) return false;
  if (tracked_entries_limit_ > 0) Track(parent, name);
  return true;
}

void InodeTable::Track(uint64_t parent, std::string_view name) {
  if (entries_.size() < tracked_entries_limit_) {
    entries_.emplace(parent, std::string(name));
  } else if (!entries_.contains(std::pair<uint64_t, std::string>(parent, name))) {
    entries_complete_ = false;
  }
}

void InodeTable::TrackEntries(size_t limit) {
  absl::MutexLock lock(&mutex_);
  tracked_entries_limit_ = limit;
}

// Lookups wait for this only as long as it takes to copy the node ids: the names leave in a swap.
KernelCache InodeTable::ReplaceRoot(internal::UniqueFd root) {
  KernelCache cache;
  absl::MutexLock lock(&mutex_);
  KeepOldRootForItsNames();
  ServeAsRoot(std::move(root));
  cache.entries.swap(entries_);
  cache.entries_complete = std::exchange(entries_complete_, true);
  cache.nodeids.reserve(by_nodeid_.size());
  for (const auto& [nodeid, entry] : by_nodeid_) {
    if (entry.lookups > 0) cache.nodeids.push_back(nodeid);  // not those only kept as parents
  }
  return cache;
}

// Nodes named under the old root (no handles) must reopen under it, not under the new one (where
// a file shared by both revisions has other directories above it): the old root's fd stays open
// as a node the kernel never learns of, for as long as names are under it.
void InodeTable::KeepOldRootForItsNames() {
  Entry& root = by_nodeid_[kRootNodeId];
  if (root.named_children == 0) return;
  internal::UniqueFd old_root(::fcntl(root.open->path.get(), F_DUPFD_CLOEXEC, 0));
  if (!old_root.valid()) return;  // out of fds: the names under it answer ESTALE instead
  const uint64_t kept = next_nodeid_++;
  Entry& entry = by_nodeid_[kept];
  entry.dev = root.dev;
  entry.ino = root.ino;
  entry.type = root.type;
  entry.open = std::make_shared<Inode>(Inode{kept, root.dev, root.ino, std::move(old_root)});
  List(kept, entry);
  std::vector<std::pair<std::string, uint64_t>> names;
  for (const auto& [key, nodeid] : by_name_) {
    if (key.first == kRootNodeId) names.emplace_back(key.second, nodeid);
  }
  for (auto& [name, nodeid] : names) {
    by_name_.erase(std::pair(kRootNodeId, name));
    by_nodeid_[nodeid].parent = kept;
    by_name_[{kept, std::move(name)}] = nodeid;
  }
  entry.named_children = std::exchange(root.named_children, 0);
}

uint64_t InodeTable::lookups_served() const {
  absl::MutexLock lock(&mutex_);
  return lookups_served_;
}

// A closed node is reopened by handle, or under its parent, which may have to be reopened first:
// the chain of closed nodes up to one that is open or has a handle is walked, then opened from
// the top down, outside the lock. A rename through the mount meanwhile makes a name of the chain
// stale: the walk is made again, a few times at most.
std::shared_ptr<const Inode> InodeTable::Get(uint64_t nodeid) {
  constexpr int kWalks = 3;
  std::shared_ptr<const Inode> inode;
  for (int walk = 0; walk < kWalks && inode == nullptr; ++walk) {
    uint64_t names_moved;
    inode = WalkAndReopen(nodeid, names_moved);
    if (inode != nullptr || errno != ESTALE) break;
    absl::MutexLock lock(&mutex_);
    if (names_moved_ == names_moved) break;
  }
  if (inode == nullptr) errno = errno == 0 ? ESTALE : errno;
  return inode;
}

// Iterative, and bounded by the table's size against a loop of names.
std::shared_ptr<const Inode> InodeTable::WalkAndReopen(uint64_t nodeid, uint64_t& names_moved) {
  std::vector<Closed> chain;
  std::shared_ptr<const Inode> top;
  {
    absl::MutexLock lock(&mutex_);
    names_moved = names_moved_;
    for (uint64_t id = nodeid; top == nullptr;) {
      auto found = by_nodeid_.find(id);
      if (found == by_nodeid_.end() ||
          (found->second.open == nullptr &&
           (!found->second.reopenable() || chain.size() >= by_nodeid_.size()))) {
        errno = ESTALE;
        return nullptr;
      }
      Entry& entry = found->second;
      if (entry.open != nullptr) {
        Touch(id, entry);
        top = entry.open;
        break;
      }
      chain.push_back(Closed{id, entry.dev, entry.ino, entry.type, entry.handle, entry.name});
      if (!entry.handle.empty()) break;
      id = entry.parent;
    }
  }
  for (auto closed = chain.rbegin(); closed != chain.rend(); ++closed) {
    top = Reopen(*closed, top.get());
    if (top == nullptr) return nullptr;
  }
  return top;
}

std::shared_ptr<const Inode> InodeTable::Reopen(const Closed& closed, const Inode* parent) {
  internal::UniqueFd path =
      !closed.handle.empty() ? handles_.Open(closed.handle)
                             : internal::UniqueFd(::openat(parent->path.get(), closed.name.c_str(),
                                                           O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!path.valid()) {
    if (errno == ENOENT) errno = ESTALE;  // its name is gone: renamed or removed meanwhile
    return nullptr;
  }
  struct stat st {};
  if (::fstat(path.get(), &st) != 0) return nullptr;
  if (st.st_dev != closed.dev || st.st_ino != closed.ino || (st.st_mode & S_IFMT) != closed.type) {
    errno = ESTALE;  // a handle or name that reaches anything else is not this node's
    return nullptr;
  }
  auto inode =
      std::make_shared<Inode>(Inode{closed.nodeid, closed.dev, closed.ino, std::move(path)});
  Closing closing;
  absl::MutexLock lock(&mutex_);
  auto entry = by_nodeid_.find(closed.nodeid);
  // Forgotten meanwhile: the request still gets its fd, which closes when it is done.
  if (entry == by_nodeid_.end()) return inode;
  if (entry->second.open != nullptr) return entry->second.open;  // reopened by another request
  Install(entry->second, inode, closing);
  return inode;
}

size_t InodeTable::size() const {
  absl::MutexLock lock(&mutex_);
  return by_nodeid_.size();
}

size_t InodeTable::open_count() const {
  absl::MutexLock lock(&mutex_);
  return recent_.size() + pinned_.size() + 1;  // the root besides
}

size_t InodeTable::pinned_count() const {
  return pinned_size_.load(std::memory_order_relaxed) + 1;  // the root besides
}

uint64_t InodeTable::LookupCount(uint64_t nodeid) const {
  absl::MutexLock lock(&mutex_);
  auto entry = by_nodeid_.find(nodeid);
  return entry == by_nodeid_.end() ? 0 : entry->second.lookups;
}

}  // namespace ringfuse::daemon
