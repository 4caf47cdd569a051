// The inode table's part of a handover: saved with no request in progress, restored into a
// table that serves nothing yet (handover_state.h).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <span>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "daemon/inodes/inode_table.h"

namespace ringfuse::daemon {
namespace {

absl::Status Broken(std::string_view why) {
  return absl::InvalidArgumentError("the handed-over inode table " + std::string(why));
}

// Takes fd `index` out of `fds`: each is taken once, and must be the inode (dev, ino).
absl::Status TakeFd(std::vector<base::UniqueFd>& fds, int index, dev_t dev, ino_t ino,
                    base::UniqueFd& taken) {
  if (index < 0 || static_cast<size_t>(index) >= fds.size() || !fds[index].valid()) {
    return Broken(absl::StrFormat("names fd %d, which it did not carry (or twice)", index));
  }
  struct stat st {};
  if (::fstat(fds[index].get(), &st) != 0 || st.st_dev != dev || st.st_ino != ino) {
    return Broken(absl::StrFormat("gives inode %u an fd of another inode", ino));
  }
  taken = std::move(fds[index]);
  return absl::OkStatus();
}

// A node id a journal may hold: not 0 or the root's, and below 2^62, which a daemon making a
// million nodes a second reaches in 146,000 years. One beyond (a torn or forged record near
// 2^64) would wrap the next node id round and fail the whole recovery (CheckNodes): it is
// dropped instead, and the kernel's requests for it are answered ESTALE.
bool IsRecordableNodeId(uint64_t nodeid) {
  return nodeid > InodeTable::kRootNodeId && nodeid < (uint64_t{1} << 62);
}

// Whether the nodes hold together: one root, each node id once and below next_nodeid, each
// parent among them.
absl::Status CheckNodes(const SavedTable& saved) {
  absl::flat_hash_set<uint64_t> nodeids;
  for (const SavedNode& node : saved.nodes) {
    if (node.nodeid == 0 || node.nodeid >= saved.next_nodeid) {
      return Broken(
          absl::StrFormat("has node id %u outside 1..%u", node.nodeid, saved.next_nodeid - 1));
    }
    if (!nodeids.insert(node.nodeid).second) {
      return Broken(absl::StrFormat("has node id %u twice", node.nodeid));
    }
  }
  if (!nodeids.contains(InodeTable::kRootNodeId)) return Broken("has no root");
  absl::flat_hash_set<std::pair<uint64_t, std::string_view>> names;
  for (const SavedNode& node : saved.nodes) {
    if (node.parent == 0) continue;
    if (!nodeids.contains(node.parent) || !IsPlainName(node.name) || !node.handle.empty() ||
        !names.emplace(node.parent, node.name).second) {
      return Broken(
          absl::StrFormat("names node %u under a node or by a name it cannot have", node.nodeid));
    }
  }
  return absl::OkStatus();
}

using Backing = std::pair<dev_t, ino_t>;

Backing BackingOf(const struct stat& st) { return {st.st_dev, st.st_ino}; }

// Whether the directory `fd` (`st` its stat) is in SOURCE: walking ".." from it reaches one of
// `shown` (SOURCE's top, and directories shown before) before the top of its filesystem or of
// this process's tree, whose ".." is itself. The directories passed are in SOURCE too and join
// `shown`, so each is walked through once. Bounded, against a filesystem that loops.
bool WalkUpToSource(int fd, struct stat st, absl::flat_hash_set<Backing>& shown) {
  constexpr size_t kDeepest = 4096;  // a path the kernel walks has at most 2048 names
  std::vector<Backing> passed;
  base::UniqueFd up;
  while (!shown.contains(BackingOf(st))) {
    if (passed.size() == kDeepest) return false;
    passed.push_back(BackingOf(st));
    up.reset(
        ::openat(up.valid() ? up.get() : fd, "..", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!up.valid() || ::fstat(up.get(), &st) != 0 || BackingOf(st) == passed.back()) {
      return false;
    }
  }
  shown.insert(passed.begin(), passed.end());
  return true;
}

// Adds to `named` each inode of `wanted` that the directory `fd` (on device `dev`) has a name
// for: its entry's number is the inode's on the directory's filesystem.
void FindNamed(int fd, dev_t dev, const absl::flat_hash_set<Backing>& wanted,
               absl::flat_hash_set<Backing>& named) {
  base::UniqueFd readable(::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  DIR* listing = readable.valid() ? ::fdopendir(readable.get()) : nullptr;
  if (listing == nullptr) return;
  readable.release();  // the listing's now
  while (const dirent* entry = ::readdir(listing)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != ".." && wanted.contains({dev, entry->d_ino})) {
      named.insert({dev, entry->d_ino});
    }
  }
  ::closedir(listing);
}

// Which of the recorded `nodes` are shown to be in SOURCE (its top directory `root`). After a
// crash the node journal alone says which inode a node is, and a record no daemon wrote (forged,
// or torn) could give any inode of the filesystem with its real handle and numbers: /etc/shadow's
// when SOURCE is a directory of the root filesystem. So a directory counts where its handle
// reaches its recorded inode and that walks up to SOURCE; a non-directory where a directory so
// shown, or SOURCE's top, names its inode (the directory of each name the kernel holds is a node
// the kernel holds too, so is among them). Its handle is checked against that inode when it is
// reopened (Reopen). What is on another mount, whose handles are not known yet, is not shown:
// its lookups show it (ProvenByLookup). It costs an open, a stat or two and a listing per
// recorded directory, and no system call per non-directory.
std::vector<bool> ShownInSource(const InodeHandles& handles, int root,
                                std::span<const SavedNode> nodes) {
  std::vector<bool> shown(nodes.size());
  struct stat top {};
  if (::fstat(root, &top) != 0) return shown;
  absl::flat_hash_set<Backing> under{BackingOf(top)}, wanted, listed, named;
  for (const SavedNode& node : nodes) {
    if (node.type != S_IFDIR) wanted.emplace(node.dev, node.ino);
  }
  auto list = [&](int fd, const struct stat& st) {
    if (named.size() < wanted.size() && listed.insert(BackingOf(st)).second) {
      FindNamed(fd, st.st_dev, wanted, named);
    }
  };
  list(root, top);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].type != S_IFDIR) continue;
    const base::ErrnoOr<base::UniqueFd> fd = handles.Open(nodes[i].handle);
    struct stat st {};
    shown[i] = fd.ok() && ::fstat(fd->get(), &st) == 0 && S_ISDIR(st.st_mode) &&
               BackingOf(st) == Backing{nodes[i].dev, nodes[i].ino} &&
               WalkUpToSource(fd->get(), st, under);
    if (shown[i]) list(fd->get(), st);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].type != S_IFDIR) shown[i] = named.contains({nodes[i].dev, nodes[i].ino});
  }
  return shown;
}

}  // namespace

SavedTable InodeTable::Save() const {
  AllLocked lock(*this);
  SavedTable saved;
  for (const Shard& shard : shards_) {
    for (const auto& [nodeid, entry] : shard.nodes) {
      const auto& serving_shard = BackingOf(entry.dev, entry.ino).nodeids;
      auto serving = serving_shard.find({entry.dev, entry.ino});
      const bool unclosable = nodeid == kRootNodeId || !entry.reopenable();
      saved.nodes.push_back(SavedNode{
          .nodeid = nodeid,
          .dev = entry.dev,
          .ino = entry.ino,
          .type = entry.type,
          .handle = entry.handle,
          .parent = entry.parent,
          .name = entry.name,
          .lookups = entry.lookups.load(),
          .serves_backing = serving != serving_shard.end() && serving->second == nodeid,
          .fd = unclosable && entry.open != nullptr ? entry.open->path.get() : -1,
      });
    }
  }
  saved.next_nodeid = next_nodeid_.load();
  saved.names_moved = names_moved_.load();
  saved.lookups_served = lookups_served_.Sum();
  looked_up_.Save(saved.tracked_entries_limit, saved.entries_complete, saved.entries);
  saved.handle_mounts = handles_.Mounts();
  return saved;
}

absl::Status InodeTable::Restore(const SavedTable& saved, std::vector<base::UniqueFd>& fds) {
  if (absl::Status checked = CheckNodes(saved); !checked.ok()) return checked;
  absl::flat_hash_map<uint64_t, base::UniqueFd> open;
  for (const SavedNode& node : saved.nodes) {
    if (node.fd < 0) continue;
    if (absl::Status taken = TakeFd(fds, node.fd, node.dev, node.ino, open[node.nodeid]);
        !taken.ok()) {
      return taken;
    }
  }
  if (!open.contains(kRootNodeId)) return Broken("has no fd for the root");
  std::vector<std::pair<int, base::UniqueFd>> mounts;
  for (const auto& [mount_id, index] : saved.handle_mounts) {
    base::UniqueFd& directory = mounts.emplace_back(mount_id, base::UniqueFd()).second;
    if (index < 0) continue;
    if (static_cast<size_t>(index) >= fds.size() || !fds[index].valid()) {
      return Broken(
          absl::StrFormat("names fd %d for mount %d, which it did not carry", index, mount_id));
    }
    directory = std::move(fds[index]);
  }
  for (auto& [mount_id, directory] : mounts) handles_.AdoptMount(mount_id, std::move(directory));
  Closing closing;  // the root this table was made with
  AllLocked lock(*this);
  Clear(closing);
  RestoreNodes(saved.nodes, open);
  next_nodeid_ = saved.next_nodeid;
  names_moved_ = saved.names_moved;
  lookups_served_.Reset(saved.lookups_served);
  looked_up_.Restore(saved.tracked_entries_limit, saved.entries_complete, saved.entries);
  return absl::OkStatus();
}

// With every lock held.
void InodeTable::Clear(Closing& closing) {
  for (Shard& shard : shards_) {
    for (auto& [nodeid, entry] : shard.nodes) {
      if (entry.open != nullptr) closing.push_back(std::move(entry.open));
    }
    shard.nodes.clear();
    shard.open.clear();
    shard.pinned.clear();
    shard.hand = 0;
    shard.unproven.clear();
  }
  for (BackingShard& shard : backing_) shard.nodeids.clear();
  by_name_.clear();
  open_count_ = 0;
  pinned_count_ = 0;
}

// With every lock held: the nodes, their names, then their fds.
void InodeTable::RestoreNodes(const std::vector<SavedNode>& nodes,
                              absl::flat_hash_map<uint64_t, base::UniqueFd>& open) {
  for (const SavedNode& node : nodes) {
    Entry& entry = ShardOf(node.nodeid).nodes[node.nodeid];
    entry.dev = node.dev;
    entry.ino = node.ino;
    entry.type = node.type;
    entry.handle = node.handle;
    entry.lookups = node.lookups;
    if (node.serves_backing)
      BackingOf(node.dev, node.ino).nodeids[{node.dev, node.ino}] = node.nodeid;
  }
  for (const SavedNode& node : nodes) {
    if (node.parent == 0) continue;
    Entry& entry = *Find(ShardOf(node.nodeid), node.nodeid);
    entry.parent = node.parent;
    entry.name = node.name;
    by_name_[{node.parent, node.name}] = node.nodeid;
    ++Find(ShardOf(node.parent), node.parent)->named_children;
  }
  names_given_ = !by_name_.empty();
  for (auto& [nodeid, fd] : open) {
    Shard& shard = ShardOf(nodeid);
    Entry& entry = *Find(shard, nodeid);
    Install(shard, entry,
            std::make_shared<Inode>(Inode{nodeid, entry.dev, entry.ino, std::move(fd)}));
  }
}

void InodeTable::GiveNodeIdsFrom(uint64_t first) {
  uint64_t next = next_nodeid_.load();
  while (next < first && !next_nodeid_.compare_exchange_weak(next, first)) {
  }
}

void InodeTable::RecordNodesIn(NodeRecorder* recorder) {
  AllLocked lock(*this);
  recorder_ = recorder;
}

// The recorded nodes beside this table's own root, restored as a handover's would be: each the
// newest node of its backing inode serves it, and none is open until a request needs it.
absl::Status InodeTable::RestoreRecorded(std::vector<SavedNode> nodes) {
  SavedTable saved;
  std::vector<base::UniqueFd> fds;
  {
    AllLocked lock(*this);
    const Entry& root = *Find(ShardOf(kRootNodeId), kRootNodeId);
    fds.emplace_back(::fcntl(root.open->path.get(), F_DUPFD_CLOEXEC, 0));
    if (!fds.back().valid()) return absl::InternalError("cannot duplicate the root's fd");
    SavedNode& saved_root = saved.nodes.emplace_back();
    saved_root.nodeid = kRootNodeId;
    saved_root.dev = root.dev;
    saved_root.ino = root.ino;
    saved_root.type = root.type;
    saved_root.lookups = 1;
    saved_root.serves_backing = true;
    saved_root.fd = 0;
    saved.next_nodeid = next_nodeid_.load();
    saved.lookups_served = lookups_served_.Sum();
  }
  absl::flat_hash_map<std::pair<dev_t, ino_t>, size_t> newest;
  for (SavedNode& node : nodes) {
    if (!IsRecordableNodeId(node.nodeid)) continue;  // dropped: the rest still come back
    saved.next_nodeid = std::max(saved.next_nodeid, node.nodeid + 1);
    const std::pair<dev_t, ino_t> backing{node.dev, node.ino};
    if (backing == std::pair{saved.nodes[0].dev, saved.nodes[0].ino}) continue;  // the root's
    auto [at, inserted] = newest.try_emplace(backing, saved.nodes.size());
    if (!inserted && saved.nodes[at->second].nodeid < node.nodeid) {
      saved.nodes[at->second].serves_backing = false;
      at->second = saved.nodes.size();
    }
    node.serves_backing = at->second == saved.nodes.size();
    node.parent = 0;
    node.fd = -1;
    saved.nodes.push_back(std::move(node));
  }
  // Those not shown to be in SOURCE come back without a way to reopen them, their handles aside.
  const std::span<SavedNode> recorded = std::span(saved.nodes).subspan(1);
  const std::vector<bool> shown = ShownInSource(handles_, fds[0].get(), recorded);
  std::vector<std::pair<uint64_t, std::string>> unproven;
  for (size_t i = 0; i < recorded.size(); ++i) {
    if (!shown[i]) unproven.emplace_back(recorded[i].nodeid, std::exchange(recorded[i].handle, {}));
  }
  if (absl::Status restored = Restore(saved, fds); !restored.ok()) return restored;
  AllLocked lock(*this);
  for (Shard& shard : shards_) {
    for (auto& [nodeid, entry] : shard.nodes) entry.recorded = nodeid != kRootNodeId;
  }
  for (auto& [nodeid, handle] : unproven) ShardOf(nodeid).unproven[nodeid] = std::move(handle);
  return absl::OkStatus();
}

}  // namespace ringfuse::daemon
