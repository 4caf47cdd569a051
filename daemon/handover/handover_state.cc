#include "daemon/handover/handover_state.h"

#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/record_fields.h"
#include "daemon/handover/fs_handover.h"

namespace ringfuse::daemon {
namespace {

using base::GetField;
using base::GetString;
using base::PutField;
using base::PutString;
using base::Reader;

constexpr uint32_t kMagic = 0x52464453;  // "RFDS"
// Raise it whenever the layout changes, and keep reading the previous one: the successor is
// often a newer binary.
constexpr uint32_t kVersion = 1;

// The one list of each saved struct's fields, for writing and for reading.
template <typename Node, typename Visit>
void NodeFields(Node& node, Visit&& visit) {
  visit(node.nodeid);
  visit(node.dev);
  visit(node.ino);
  visit(node.type);
  visit(node.handle);
  visit(node.parent);
  visit(node.name);
  visit(node.lookups);
  visit(node.serves_backing);
  visit(node.fd);
}
template <typename File, typename Visit>
void FileFields(File& file, Visit&& visit) {
  visit(file.fh);
  visit(file.fd);
  visit(file.flags);
  visit(file.passthrough);
  visit(file.direct);
}
template <typename Dir, typename Visit>
void DirFields(Dir& dir, Visit&& visit) {
  visit(dir.fh);
  visit(dir.fd);
}
template <typename Open, typename Visit>
void OwnerOpenFields(Open& open, Visit&& visit) {
  visit(open.dev);
  visit(open.ino);
  visit(open.owner);
  visit(open.fd);
  visit(open.writable);
  visit(open.last_fh);
  visit(open.pid);
}
template <typename Id, typename Visit>
void BackingIdFields(Id& id, Visit&& visit) {
  visit(id.dev);
  visit(id.ino);
  visit(id.id);
  visit(id.writable);
  visit(id.opens);
}
template <typename Entry, typename Visit>
void EntryFields(Entry& entry, Visit&& visit) {
  visit(entry.first);
  visit(entry.second);
}
template <typename Mount, typename Visit>
void MountFields(Mount& mount, Visit&& visit) {
  visit(mount.first);
  visit(mount.second);
}

class Writer {
 public:
  // The fds sent beside the bytes; a saved fd is written as its index among them.
  int FdIndex(int fd) {
    if (fd < 0) return -1;
    payload_.fds.push_back(fd);
    return static_cast<int>(payload_.fds.size() - 1);
  }
  template <typename T>
  void Put(const T& value) {
    if constexpr (std::is_same_v<T, std::string>) {
      base::PutString(payload_.bytes, value);
    } else {
      base::PutField(payload_.bytes, value);
    }
  }
  // A count, then each item's fields.
  template <typename Items, typename Fields>
  void PutAll(const Items& items, Fields fields) {
    Put(static_cast<uint64_t>(items.size()));
    for (const auto& item : items) fields(item, [&](const auto& field) { Put(field); });
  }
  // Room for `bytes` more: a table of many nodes is written in one allocation, not in doublings.
  void Reserve(size_t bytes) { payload_.bytes.reserve(payload_.bytes.size() + bytes); }
  HandoverPayload Take() { return std::move(payload_); }

 private:
  HandoverPayload payload_;
};

class RecordReader {
 public:
  explicit RecordReader(std::string_view bytes)
      : in_(ConstBytes(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size())) {}

  template <typename T>
  void Get(T& value) {
    if constexpr (std::is_same_v<T, std::string>) {
      ok_ = ok_ && base::GetString(in_, value);
    } else {
      ok_ = ok_ && base::GetField(in_, value);
    }
  }
  // As PutAll wrote them. A count beyond what the bytes left can hold stops at the first item
  // that ends early, so no count makes this allocate more than the record's size.
  template <typename Item, typename Fields>
  void GetAll(std::vector<Item>& items, Fields fields) {
    uint64_t count = 0;
    Get(count);
    items.reserve(std::min<uint64_t>(count, in_.remaining()));  // every item takes a byte at least
    for (uint64_t i = 0; ok_ && i < count; ++i) {
      Item item{};
      fields(item, [&](auto& field) { Get(field); });
      if (ok_) items.push_back(std::move(item));
    }
  }
  bool ok() const { return ok_; }
  bool at_end() const { return in_.remaining() == 0; }

 private:
  base::Reader in_;
  bool ok_ = true;
};

// The saved fds become indices among the payload's.
void IndexFds(SavedFs& saved, Writer& out) {
  for (SavedNode& node : saved.table.nodes) node.fd = out.FdIndex(node.fd);
  for (auto& mount : saved.table.handle_mounts) mount.second = out.FdIndex(mount.second);
  for (SavedFs::File& file : saved.files) file.fd = out.FdIndex(file.fd);
  for (SavedFs::Dir& dir : saved.dirs) dir.fd = out.FdIndex(dir.fd);
  for (OwnerLocks::Saved& open : saved.owner_opens) open.fd = out.FdIndex(open.fd);
}

template <typename Saved, typename Visit>
void TableFields(Saved& table, Visit&& visit) {
  visit(table.next_nodeid);
  visit(table.names_moved);
  visit(table.lookups_served);
  visit(table.tracked_entries_limit);
  visit(table.entries_complete);
}

absl::Status Corrupt(std::string_view why) {
  return absl::DataLossError("the handed-over state of ringfused " + std::string(why));
}

}  // namespace

absl::StatusOr<HandoverPayload> SaveHandoverState(PassthroughFs& fs, const std::string& revision) {
  SavedFs saved = SaveFs(fs);
  Writer out;
  // About what a node takes (its fields and a file handle), so that the bytes grow once.
  constexpr size_t kBytesPerNode = 96;
  out.Reserve(saved.table.nodes.size() * kBytesPerNode);
  IndexFds(saved, out);
  out.Put(kMagic);
  out.Put(kVersion);
  out.Put(revision);
  TableFields(saved.table, [&out](const auto& field) { out.Put(field); });
  out.PutAll(saved.table.nodes, [](auto& item, auto visit) { NodeFields(item, visit); });
  out.PutAll(saved.table.entries, [](auto& item, auto visit) { EntryFields(item, visit); });
  out.PutAll(saved.table.handle_mounts, [](auto& item, auto visit) { MountFields(item, visit); });
  out.PutAll(saved.files, [](auto& item, auto visit) { FileFields(item, visit); });
  out.PutAll(saved.dirs, [](auto& item, auto visit) { DirFields(item, visit); });
  out.PutAll(saved.owner_opens, [](auto& item, auto visit) { OwnerOpenFields(item, visit); });
  out.PutAll(saved.backing_ids, [](auto& item, auto visit) { BackingIdFields(item, visit); });
  return out.Take();
}

absl::StatusOr<std::string> RestoreHandoverState(HandoverPayload payload, PassthroughFs& fs) {
  std::vector<base::UniqueFd> fds;
  for (int fd : payload.fds) fds.emplace_back(fd);
  RecordReader in(payload.bytes);
  uint32_t magic = 0, version = 0;
  in.Get(magic);
  in.Get(version);
  if (!in.ok() || magic != kMagic) return Corrupt("is not one (wrong magic)");
  if (version != kVersion) {
    return Corrupt(
        absl::StrFormat("has format version %u; this binary reads version %u", version, kVersion));
  }
  std::string revision;
  SavedFs saved;
  in.Get(revision);
  TableFields(saved.table, [&in](auto& field) { in.Get(field); });
  in.GetAll(saved.table.nodes, [](auto& item, auto visit) { NodeFields(item, visit); });
  in.GetAll(saved.table.entries, [](auto& item, auto visit) { EntryFields(item, visit); });
  in.GetAll(saved.table.handle_mounts, [](auto& item, auto visit) { MountFields(item, visit); });
  in.GetAll(saved.files, [](auto& item, auto visit) { FileFields(item, visit); });
  in.GetAll(saved.dirs, [](auto& item, auto visit) { DirFields(item, visit); });
  in.GetAll(saved.owner_opens, [](auto& item, auto visit) { OwnerOpenFields(item, visit); });
  in.GetAll(saved.backing_ids, [](auto& item, auto visit) { BackingIdFields(item, visit); });
  if (!in.ok()) return Corrupt("ends early");
  if (!in.at_end()) return Corrupt("runs on past its last field");
  if (absl::Status restored = RestoreFs(fs, saved, fds); !restored.ok()) return restored;
  return revision;
}

}  // namespace ringfuse::daemon
