#include "daemon/inode_table.h"

#include <fcntl.h>

#include <cerrno>
#include <string>

namespace ringfuse::daemon {

bool IsPlainName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(std::string_view("/\0", 2)) == std::string_view::npos;
}

InodeTable::InodeTable(UniqueFd root) {
  absl::MutexLock lock(&mutex_);
  // The root is never forgotten: one lookup that no FORGET takes away.
  by_nodeid_[kRootNodeId].lookups = 1;
  ServeAsRoot(std::move(root));
}

void InodeTable::ServeAsRoot(UniqueFd root) {
  struct stat st {};
  ::fstat(root.get(), &st);  // an open directory: fstat has nothing left to fail on
  Entry& entry = by_nodeid_[kRootNodeId];
  if (entry.inode != nullptr) by_backing_.erase({entry.inode->dev, entry.inode->ino});
  by_backing_[{st.st_dev, st.st_ino}] = kRootNodeId;
  entry.inode = std::make_shared<Inode>(Inode{kRootNodeId, st.st_dev, st.st_ino, std::move(root)});
}

void InodeTable::AddNode(UniqueFd path, Found& found) {
  const uint64_t nodeid = next_nodeid_++;
  auto inode =
      std::make_shared<Inode>(Inode{nodeid, found.attr.st_dev, found.attr.st_ino, std::move(path)});
  by_backing_[{found.attr.st_dev, found.attr.st_ino}] = nodeid;
  by_nodeid_[nodeid] = Entry{inode, 1};
  found.inode = std::move(inode);
}

int InodeTable::Lookup(uint64_t parent, std::string_view name, Found& found) {
  if (!IsPlainName(name)) return EINVAL;
  const std::shared_ptr<const Inode> directory = Begin(parent, name);
  if (directory == nullptr) return ESTALE;
  const std::string name_string(name);
  UniqueFd path(
      ::openat(directory->path.get(), name_string.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!path.valid() || ::fstat(path.get(), &found.attr) != 0) return errno;

  absl::MutexLock lock(&mutex_);
  const std::pair<dev_t, ino_t> key{found.attr.st_dev, found.attr.st_ino};
  if (auto known = by_backing_.find(key); known != by_backing_.end()) {
    Entry& entry = by_nodeid_[known->second];
    ++entry.lookups;
    found.inode = entry.inode;
    return 0;  // the new O_PATH fd closes: the node keeps its first one
  }
  AddNode(std::move(path), found);
  return 0;
}

int InodeTable::Adopt(UniqueFd path, Found& found) {
  if (!path.valid() || ::fstat(path.get(), &found.attr) != 0) return errno;
  absl::MutexLock lock(&mutex_);
  AddNode(std::move(path), found);
  return 0;
}

void InodeTable::Forget(uint64_t nodeid, uint64_t count) {
  if (nodeid == kRootNodeId) return;
  absl::MutexLock lock(&mutex_);
  auto entry = by_nodeid_.find(nodeid);
  if (entry == by_nodeid_.end()) return;
  if (entry->second.lookups > count) {
    entry->second.lookups -= count;
    return;
  }
  // Requests in flight may still hold the inode; its fd closes when the last one lets go.
  by_backing_.erase({entry->second.inode->dev, entry->second.inode->ino});
  by_nodeid_.erase(entry);
}

// Counts the lookup and notes its name before resolving it, under the same lock as the root's
// switch: a lookup either is reported by ReplaceRoot or sees the new root.
std::shared_ptr<const Inode> InodeTable::Begin(uint64_t parent, std::string_view name) {
  absl::MutexLock lock(&mutex_);
  ++lookups_served_;
  auto entry = by_nodeid_.find(parent);
  if (entry == by_nodeid_.end()) return nullptr;
  if (tracked_entries_limit_ > 0) Track(parent, name);
  return entry->second.inode;
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
KernelCache InodeTable::ReplaceRoot(UniqueFd root) {
  KernelCache cache;
  absl::MutexLock lock(&mutex_);
  ServeAsRoot(std::move(root));
  cache.entries.swap(entries_);
  cache.entries_complete = std::exchange(entries_complete_, true);
  cache.nodeids.reserve(by_nodeid_.size());
  for (const auto& [nodeid, entry] : by_nodeid_) cache.nodeids.push_back(nodeid);
  return cache;
}

uint64_t InodeTable::lookups_served() const {
  absl::MutexLock lock(&mutex_);
  return lookups_served_;
}

std::shared_ptr<const Inode> InodeTable::Get(uint64_t nodeid) const {
  absl::MutexLock lock(&mutex_);
  auto entry = by_nodeid_.find(nodeid);
  return entry == by_nodeid_.end() ? nullptr : entry->second.inode;
}

size_t InodeTable::size() const {
  absl::MutexLock lock(&mutex_);
  return by_nodeid_.size();
}

uint64_t InodeTable::LookupCount(uint64_t nodeid) const {
  absl::MutexLock lock(&mutex_);
  auto entry = by_nodeid_.find(nodeid);
  return entry == by_nodeid_.end() ? 0 : entry->second.lookups;
}

}  // namespace ringfuse::daemon
