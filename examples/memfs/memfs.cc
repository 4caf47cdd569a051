#include "memfs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <vector>

namespace ringfuse::examples {
namespace {

// Every node keeps generation 1: nodeids are never reused, so (nodeid, 1) is unique.
constexpr uint64_t kGeneration = 1;
constexpr uint32_t kBlockSize = 4096;
constexpr uint64_t kStatBlockSize = 512;  // the unit of st_blocks
constexpr uint64_t kDirectorySize = 4096;
// Writes and truncations past this fail with EFBIG instead of exhausting memory.
constexpr uint64_t kMaxFileSize = uint64_t{1} << 32;
// What STATFS reports as the capacity: large enough that nobody runs out.
constexpr uint64_t kTotalBlocks = uint64_t{1} << 24;
constexpr uint64_t kTotalFiles = uint64_t{1} << 20;
constexpr uint32_t kNameLengthMax = 255;
constexpr uint32_t kPermissionBits = 07777;
// renameat2(2) flags, from <linux/fs.h>.
constexpr uint32_t kRenameNoreplace = 1u << 0;
constexpr uint32_t kRenameExchange = 1u << 1;

timespec Now() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return now;
}

// A time SETATTR sets, as the inode keeps it.
timespec TimeOf(const op::SetTime& time, const timespec& now) {
  if (time.now) return now;
  return timespec{static_cast<time_t>(time.seconds), static_cast<long>(time.nanoseconds)};
}

// DT_* values are the S_IF* file type bits shifted down.
uint32_t DirentType(uint32_t mode) { return (mode & S_IFMT) >> 12; }

uint32_t ModeWithUmask(uint32_t file_type, uint32_t mode, uint32_t umask) {
  return file_type | (mode & kPermissionBits & ~umask);
}

Opcode OpcodeOf(const RequestContext& context) {
  return static_cast<Opcode>(context.header.opcode);
}

uint64_t StatBlocks(uint64_t size) { return (size + kStatBlockSize - 1) / kStatBlockSize; }

bool HasTimeout(Timeout timeout) { return timeout.seconds != 0 || timeout.nanoseconds != 0; }

template <typename Reply, typename... Body>
void Answer(Reply& reply, int error, const Body&... body) {
  if (error != 0) {
    reply.Error(error);
  } else {
    reply.Ok(body...);
  }
}

// GETXATTR and LISTXATTR: size 0 asks for the length; a buffer too small is ERANGE.
void AnswerXattr(XattrReply& reply, int error, const std::string& value, uint32_t size) {
  if (error != 0) {
    reply.Error(error);
  } else if (size == 0) {
    reply.Size(static_cast<uint32_t>(value.size()));
  } else if (size < value.size()) {
    reply.Error(ERANGE);
  } else {
    reply.Data(AsBytes(std::string_view(value)));
  }
}

}  // namespace

MemFs::MemFs() : MemFs(Options{}) {}

MemFs::MemFs(const Options& options) : options_(options) {
  Inode& root = inodes_[wire::kRootId];
  root.nodeid = wire::kRootId;
  root.mode = S_IFDIR | 0755;
  root.nlink = 2;
  root.parent = wire::kRootId;
  root.atime = root.mtime = root.ctime = Now();
}

// ---- The owner's side ----

uint64_t MemFs::AddFile(uint64_t parent, std::string_view name, std::string_view contents,
                        uint32_t mode) {
  return AddDirectly(parent, name,
                     NodeSpec{.mode = S_IFREG | (mode & kPermissionBits), .contents = contents});
}

uint64_t MemFs::AddDir(uint64_t parent, std::string_view name, uint32_t mode) {
  return AddDirectly(parent, name, NodeSpec{.mode = S_IFDIR | (mode & kPermissionBits)});
}

uint64_t MemFs::AddSymlink(uint64_t parent, std::string_view name, std::string_view target) {
  return AddDirectly(parent, name, NodeSpec{.mode = S_IFLNK | 0777, .contents = target});
}

uint64_t MemFs::AddDirectly(uint64_t parent, std::string_view name, const NodeSpec& spec) {
  std::lock_guard lock(mu_);
  uint64_t nodeid = 0;
  return AddChild(parent, name, spec, &nodeid) == 0 ? nodeid : 0;
}

uint64_t MemFs::FindChild(uint64_t parent, std::string_view name) const {
  std::lock_guard lock(mu_);
  return ChildOf(parent, name);
}

bool MemFs::SetSymlinkTarget(uint64_t nodeid, std::string_view target) {
  std::lock_guard lock(mu_);
  Inode* inode = Find(nodeid);
  if (inode == nullptr || !S_ISLNK(inode->mode)) return false;
  inode->target = target;
  inode->ctime = Now();
  return true;
}

bool MemFs::SetContents(uint64_t nodeid, std::string_view contents) {
  std::lock_guard lock(mu_);
  Inode* inode = Find(nodeid);
  if (inode == nullptr || !S_ISREG(inode->mode)) return false;
  inode->data = contents;
  inode->mtime = inode->ctime = Now();
  return true;
}

std::optional<std::string> MemFs::Contents(uint64_t nodeid) const {
  std::lock_guard lock(mu_);
  const Inode* inode = Find(nodeid);
  if (inode == nullptr || !S_ISREG(inode->mode)) return std::nullopt;
  return inode->data;
}

bool MemFs::Remove(uint64_t parent, std::string_view name) {
  std::lock_guard lock(mu_);
  const Inode* child = Find(ChildOf(parent, name));
  return child != nullptr && RemoveEntry(parent, name, S_ISDIR(child->mode)) == 0;
}

uint64_t MemFs::RequestCount(Opcode opcode) const {
  const auto index = static_cast<size_t>(opcode);
  return index < requests_.size() ? requests_[index].load(std::memory_order_relaxed) : 0;
}

uint64_t MemFs::LookupCount(uint64_t parent, std::string_view name) const {
  std::lock_guard lock(mu_);
  const auto it = lookups_.find({parent, std::string(name)});
  return it == lookups_.end() ? 0 : it->second;
}

uint64_t MemFs::KernelRefs(uint64_t nodeid) const {
  std::lock_guard lock(mu_);
  const Inode* inode = Find(nodeid);
  return inode == nullptr ? 0 : inode->nlookup;
}

size_t MemFs::OpenHandleCount() const {
  std::lock_guard lock(mu_);
  return handles_.size();
}

size_t MemFs::NodeCount() const {
  std::lock_guard lock(mu_);
  return inodes_.size();
}

void MemFs::SetBeforeOp(BeforeOp hook) {
  std::lock_guard lock(hook_mu_);
  before_op_ = hook ? std::make_shared<const BeforeOp>(std::move(hook)) : nullptr;
}

// ---- Request bookkeeping ----

// Counted before the hook runs, so an owner that sees the count knows the request is held.
void MemFs::Enter(Opcode opcode) {
  const auto index = static_cast<size_t>(opcode);
  if (index < requests_.size()) requests_[index].fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<const BeforeOp> hook;
  {
    std::lock_guard lock(hook_mu_);
    hook = before_op_;
  }
  if (hook != nullptr) (*hook)(opcode);
}

template <typename Reply>
bool MemFs::Begin(const RequestContext& context, Reply& reply) {
  Enter(OpcodeOf(context));
  if (!context.Interrupted()) return true;
  reply.Error(EINTR);
  return false;
}

// ---- The tree ----

MemFs::Inode* MemFs::Find(uint64_t nodeid) {
  const auto it = inodes_.find(nodeid);
  return it == inodes_.end() ? nullptr : &it->second;
}

const MemFs::Inode* MemFs::Find(uint64_t nodeid) const {
  const auto it = inodes_.find(nodeid);
  return it == inodes_.end() ? nullptr : &it->second;
}

MemFs::Inode* MemFs::FindDir(uint64_t nodeid, int* error) {
  Inode* inode = Find(nodeid);
  *error = inode == nullptr ? ENOENT : !S_ISDIR(inode->mode) ? ENOTDIR : 0;
  return *error == 0 ? inode : nullptr;
}

uint64_t MemFs::ChildOf(uint64_t parent, std::string_view name) const {
  const Inode* dir = Find(parent);
  if (dir == nullptr) return 0;
  const auto it = dir->children.find(name);
  return it == dir->children.end() ? 0 : it->second;
}

uint64_t MemFs::SizeOf(const Inode& inode) {
  if (S_ISREG(inode.mode)) return inode.data.size();
  if (S_ISLNK(inode.mode)) return inode.target.size();
  if (S_ISDIR(inode.mode)) return kDirectorySize;
  return 0;
}

wire::Attr MemFs::AttrOf(const Inode& inode) {
  wire::Attr attr{};
  attr.ino = inode.nodeid;
  attr.size = SizeOf(inode);
  attr.blocks = StatBlocks(attr.size);
  attr.atime = static_cast<uint64_t>(inode.atime.tv_sec);
  attr.mtime = static_cast<uint64_t>(inode.mtime.tv_sec);
  attr.ctime = static_cast<uint64_t>(inode.ctime.tv_sec);
  attr.atimensec = static_cast<uint32_t>(inode.atime.tv_nsec);
  attr.mtimensec = static_cast<uint32_t>(inode.mtime.tv_nsec);
  attr.ctimensec = static_cast<uint32_t>(inode.ctime.tv_nsec);
  attr.mode = inode.mode;
  attr.nlink = inode.nlink;
  attr.uid = inode.uid;
  attr.gid = inode.gid;
  attr.rdev = inode.rdev;
  attr.blksize = kBlockSize;
  return attr;
}

wire::EntryOut MemFs::EntryForKernel(Inode& inode) {
  ++inode.nlookup;
  return MakeEntry(inode.nodeid, kGeneration, AttrOf(inode), options_.entry, options_.attr);
}

int MemFs::AddChild(uint64_t parent, std::string_view name, const NodeSpec& spec,
                    uint64_t* nodeid) {
  int error = 0;
  Inode* dir = FindDir(parent, &error);
  if (dir == nullptr) return error;
  if (dir->children.contains(name)) return EEXIST;
  const uint64_t id = next_nodeid_++;
  Inode& inode = inodes_[id];  // references to other nodes (dir) stay valid across rehashing
  inode.nodeid = id;
  inode.mode = spec.mode;
  inode.uid = spec.uid;
  inode.gid = spec.gid;
  inode.rdev = spec.rdev;
  inode.atime = inode.mtime = inode.ctime = Now();
  if (S_ISDIR(spec.mode)) {
    inode.nlink = 2;
    inode.parent = parent;
    ++dir->nlink;  // the child's ".."
  } else if (S_ISLNK(spec.mode)) {
    inode.target = spec.contents;
  } else if (S_ISREG(spec.mode)) {
    inode.data = spec.contents;
  }
  dir->children.emplace(name, id);
  dir->mtime = dir->ctime = inode.ctime;
  *nodeid = id;
  return 0;
}

int MemFs::LookupChild(uint64_t parent, std::string_view name, wire::EntryOut* entry) {
  int error = 0;
  if (FindDir(parent, &error) == nullptr) return error;
  Inode* child = Find(ChildOf(parent, name));
  if (child == nullptr) return ENOENT;
  *entry = EntryForKernel(*child);
  return 0;
}

int MemFs::MakeNode(uint64_t parent, std::string_view name, const NodeSpec& spec,
                    wire::EntryOut* entry) {
  uint64_t nodeid = 0;
  const int error = AddChild(parent, name, spec, &nodeid);
  if (error == 0) *entry = EntryForKernel(inodes_.at(nodeid));
  return error;
}

void MemFs::ForgetNode(uint64_t nodeid, uint64_t nlookup) {
  Inode* inode = Find(nodeid);
  if (inode == nullptr) return;
  inode->nlookup -= std::min(nlookup, inode->nlookup);
  ReclaimIfUnused(*inode);
}

// A node goes when it has no name left and the kernel no longer knows it. An open file keeps a
// lookup reference in the kernel, so this never pulls a node from under an open handle.
void MemFs::ReclaimIfUnused(const Inode& inode) {
  if (inode.nodeid == wire::kRootId || inode.nlink != 0 || inode.nlookup != 0) return;
  const uint64_t nodeid = inode.nodeid;  // erase must not read the key from the erased node
  inodes_.erase(nodeid);
}

// ---- Removing and renaming ----

int MemFs::RemoveEntry(uint64_t parent, std::string_view name, bool directory) {
  int error = 0;
  Inode* dir = FindDir(parent, &error);
  if (dir == nullptr) return error;
  const auto it = dir->children.find(name);
  if (it == dir->children.end()) return ENOENT;
  Inode& child = inodes_.at(it->second);
  if (directory && !S_ISDIR(child.mode)) return ENOTDIR;
  if (!directory && S_ISDIR(child.mode)) return EISDIR;
  if (directory && !child.children.empty()) return ENOTEMPTY;
  dir->children.erase(it);
  DropLink(*dir, child);
  return 0;
}

// `child` has lost its entry in `parent`; account for it. `child` may be gone afterwards.
void MemFs::DropLink(Inode& parent, Inode& child) {
  const timespec now = Now();
  parent.mtime = parent.ctime = now;
  child.ctime = now;
  if (S_ISDIR(child.mode)) {
    --parent.nlink;  // the child's ".."
    child.nlink = 0;
  } else {
    --child.nlink;
  }
  ReclaimIfUnused(child);
}

int MemFs::RenameEntry(uint64_t old_parent, const op::Rename& args) {
  // RENAME_WHITEOUT is for union filesystems; NOREPLACE and EXCHANGE exclude each other.
  if ((args.flags() & ~(kRenameNoreplace | kRenameExchange)) != 0 ||
      args.flags() == (kRenameNoreplace | kRenameExchange)) {
    return EINVAL;
  }
  int error = 0;
  Inode* from = FindDir(old_parent, &error);
  if (from == nullptr) return error;
  Inode* to = FindDir(args.newdir(), &error);
  if (to == nullptr) return error;
  const auto source = from->children.find(args.old_name);
  if (source == from->children.end()) return ENOENT;
  const auto target = to->children.find(args.new_name);
  const bool target_exists = target != to->children.end();
  if ((args.flags() & kRenameExchange) != 0) {
    if (!target_exists) return ENOENT;
    ExchangeEntries(*from, source->second, *to, target->second);
    return 0;
  }
  if (target_exists) {
    if ((args.flags() & kRenameNoreplace) != 0) return EEXIST;
    // Two names of one file: rename(2) does nothing.
    if (target->second == source->second) return 0;
    error = ReplaceTarget(*to, target, inodes_.at(source->second));
    if (error != 0) return error;
  }
  Inode& moved = inodes_.at(source->second);
  from->children.erase(source);
  to->children.emplace(args.new_name, moved.nodeid);
  MoveUnder(moved, *from, *to);
  return 0;
}

// Removes the entry a rename is about to overwrite, if rename(2) allows it. (The VFS has already
// refused to move a directory into itself.)
int MemFs::ReplaceTarget(Inode& dir, Children::iterator target, const Inode& source) {
  Inode& replaced = inodes_.at(target->second);
  if (S_ISDIR(source.mode) && !S_ISDIR(replaced.mode)) return ENOTDIR;
  if (!S_ISDIR(source.mode) && S_ISDIR(replaced.mode)) return EISDIR;
  if (S_ISDIR(replaced.mode) && !replaced.children.empty()) return ENOTEMPTY;
  dir.children.erase(target);
  DropLink(dir, replaced);
  return 0;
}

// RENAME_EXCHANGE: the two names swap the nodes they point to.
void MemFs::ExchangeEntries(Inode& from, uint64_t& source_slot, Inode& to, uint64_t& target_slot) {
  Inode& source = inodes_.at(source_slot);
  Inode& target = inodes_.at(target_slot);
  std::swap(source_slot, target_slot);
  MoveUnder(source, from, to);
  MoveUnder(target, to, from);
}

// `child` now has its name in `to` instead of `from`; a directory's ".." follows it.
void MemFs::MoveUnder(Inode& child, Inode& from, Inode& to) {
  const timespec now = Now();
  child.ctime = now;
  from.mtime = from.ctime = now;
  to.mtime = to.ctime = now;
  if (!S_ISDIR(child.mode) || from.nodeid == to.nodeid) return;
  --from.nlink;
  ++to.nlink;
  child.parent = to.nodeid;
}

int MemFs::LinkNode(uint64_t nodeid, uint64_t new_parent, std::string_view new_name,
                    wire::EntryOut* entry) {
  Inode* inode = Find(nodeid);
  if (inode == nullptr) return ENOENT;
  if (S_ISDIR(inode->mode)) return EPERM;
  int error = 0;
  Inode* dir = FindDir(new_parent, &error);
  if (dir == nullptr) return error;
  if (!dir->children.emplace(new_name, nodeid).second) return EEXIST;
  ++inode->nlink;
  inode->ctime = Now();
  dir->mtime = dir->ctime = inode->ctime;
  *entry = EntryForKernel(*inode);
  return 0;
}

// ---- Attributes ----

int MemFs::CheckResizable(const Inode& inode, uint64_t size) {
  if (S_ISDIR(inode.mode)) return EISDIR;
  if (!S_ISREG(inode.mode)) return EINVAL;
  return size > kMaxFileSize ? EFBIG : 0;
}

// Growing fills with zeros, as a sparse file reads back.
void MemFs::Resize(Inode& inode, uint64_t size) {
  inode.data.resize(size, '\0');
  inode.mtime = inode.ctime = Now();
}

int MemFs::SetAttributes(Inode& inode, const op::Setattr& change) {
  if (const std::optional<uint64_t> size = change.size()) {
    const int error = CheckResizable(inode, *size);
    if (error != 0) return error;
    Resize(inode, *size);
  }
  const timespec now = Now();
  if (const std::optional<uint32_t> mode = change.mode()) {
    inode.mode = (inode.mode & S_IFMT) | (*mode & kPermissionBits);
  }
  if (const std::optional<uint32_t> uid = change.uid()) inode.uid = *uid;
  if (const std::optional<uint32_t> gid = change.gid()) inode.gid = *gid;
  if (const std::optional<op::SetTime> atime = change.atime()) inode.atime = TimeOf(*atime, now);
  if (const std::optional<op::SetTime> mtime = change.mtime()) inode.mtime = TimeOf(*mtime, now);
  const std::optional<op::SetTime> ctime = change.ctime();
  inode.ctime = ctime ? TimeOf(*ctime, now) : now;
  return 0;
}

// ---- Files ----

uint64_t MemFs::NewHandle() {
  const uint64_t fh = next_fh_++;
  handles_.insert(fh);
  return fh;
}

int MemFs::CheckHandle(uint64_t fh) const { return handles_.contains(fh) ? 0 : EBADF; }

int MemFs::OpenFile(uint64_t nodeid, int flags, wire::OpenOut* open) {
  Inode* inode = Find(nodeid);
  if (inode == nullptr) return ENOENT;
  if (S_ISDIR(inode->mode)) return EISDIR;
  // With ATOMIC_O_TRUNC the kernel leaves truncation on open to us.
  if ((flags & O_TRUNC) != 0 && S_ISREG(inode->mode)) Resize(*inode, 0);
  *open = MakeOpenOut(NewHandle(), options_.open_flags);
  return 0;
}

int MemFs::CreateOrOpen(const RequestContext& context, const op::Create& args,
                        wire::EntryOut* entry, wire::OpenOut* open) {
  uint64_t nodeid = ChildOf(context.nodeid(), args.name);
  if (nodeid != 0 && (args.flags() & O_EXCL) != 0) return EEXIST;
  if (nodeid == 0) {
    const NodeSpec spec{.mode = ModeWithUmask(S_IFREG, args.mode(), args.umask()),
                        .uid = context.uid(),
                        .gid = context.gid()};
    const int error = AddChild(context.nodeid(), args.name, spec, &nodeid);
    if (error != 0) return error;
  }
  const int error = OpenFile(nodeid, args.flags(), open);
  if (error == 0) *entry = EntryForKernel(inodes_.at(nodeid));
  return error;
}

int MemFs::ReadFile(uint64_t nodeid, const op::Read& args, std::string* data) {
  const int error = CheckHandle(args.fh());
  if (error != 0) return error;
  const Inode* inode = Find(nodeid);
  if (inode == nullptr) return ENOENT;
  if (!S_ISREG(inode->mode)) return S_ISDIR(inode->mode) ? EISDIR : EINVAL;
  if (args.offset() < inode->data.size()) *data = inode->data.substr(args.offset(), args.size());
  return 0;
}

int MemFs::WriteFile(uint64_t nodeid, const op::Write& args) {
  const int error = CheckHandle(args.fh());
  if (error != 0) return error;
  Inode* inode = Find(nodeid);
  if (inode == nullptr) return ENOENT;
  if (!S_ISREG(inode->mode)) return S_ISDIR(inode->mode) ? EISDIR : EINVAL;
  const uint64_t offset = args.offset();
  if (offset > kMaxFileSize || args.data.size() > kMaxFileSize - offset) return EFBIG;
  if (offset + args.data.size() > inode->data.size()) inode->data.resize(offset + args.data.size());
  if (!args.data.empty())
    std::memcpy(inode->data.data() + offset, args.data.data(), args.data.size());
  inode->mtime = inode->ctime = Now();
  return 0;
}

wire::Kstatfs MemFs::FilesystemStats() const {
  uint64_t used_blocks = 0;
  for (const auto& [nodeid, inode] : inodes_) {
    used_blocks += (SizeOf(inode) + kBlockSize - 1) / kBlockSize;
  }
  wire::Kstatfs stats{};
  stats.blocks = kTotalBlocks;
  stats.bfree = stats.bavail = kTotalBlocks - std::min(used_blocks, kTotalBlocks);
  stats.files = kTotalFiles;
  stats.ffree = kTotalFiles - std::min<uint64_t>(inodes_.size(), kTotalFiles);
  stats.bsize = stats.frsize = kBlockSize;
  stats.namelen = kNameLengthMax;
  return stats;
}

// SEEK_SET, SEEK_CUR and SEEK_END never reach us: the kernel answers them itself. A file here
// has no holes, so all of it is data and the only hole is at its end.
int MemFs::SeekDataOrHole(uint64_t nodeid, const op::Lseek& args, uint64_t* offset) {
  const Inode* inode = Find(nodeid);
  if (inode == nullptr) return ENOENT;
  if (args.whence() != SEEK_DATA && args.whence() != SEEK_HOLE) return EINVAL;
  const uint64_t size = SizeOf(*inode);
  if (args.offset() >= size) return ENXIO;
  *offset = args.whence() == SEEK_DATA ? args.offset() : size;
  return 0;
}

// ---- Directories ----

int MemFs::OpenDir(uint64_t nodeid, wire::OpenOut* open) {
  int error = 0;
  if (FindDir(nodeid, &error) == nullptr) return error;
  *open = MakeOpenOut(NewHandle(), options_.opendir_flags);
  return 0;
}

void MemFs::ReadDirectory(const RequestContext& context, uint64_t fh, bool plus,
                          DirListingReply reply) {
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = FillDirectory(context.nodeid(), fh, reply.offset(), plus, reply.packer());
  }
  Answer(reply, error);
}

// The stream is ".", "..", then the children in name order; an entry's cookie is its position
// plus one, so the offset the kernel sends back is the position to resume from. Names created or
// removed between two calls shift later positions, so a listing that races with them may skip or
// repeat a name; stable per-entry cookies would avoid that at the cost of a second index.
int MemFs::FillDirectory(uint64_t nodeid, uint64_t fh, uint64_t offset, bool plus,
                         DirentPacker& packer) {
  int error = CheckHandle(fh);
  if (error != 0) return error;
  Inode* dir = FindDir(nodeid, &error);
  if (dir == nullptr) return error;
  uint64_t position = offset;
  for (; position < 2; ++position) {
    Inode& node = position == 0 ? *dir : DotDot(*dir);
    if (!PackEntry(packer, plus, position + 1, node, position == 0 ? "." : "..")) return 0;
  }
  if (position - 2 >= dir->children.size()) return 0;
  auto child = std::next(dir->children.begin(), static_cast<std::ptrdiff_t>(position - 2));
  for (; child != dir->children.end(); ++child, ++position) {
    if (!PackEntry(packer, plus, position + 1, inodes_.at(child->second), child->first)) break;
  }
  return 0;
}

// A removed directory that is still open may have outlived its parent; it then lists itself.
MemFs::Inode& MemFs::DotDot(Inode& dir) {
  Inode* parent = Find(dir.parent);
  return parent != nullptr ? *parent : dir;
}

bool MemFs::PackEntry(DirentPacker& packer, bool plus, uint64_t cookie, Inode& inode,
                      std::string_view name) {
  const uint32_t type = DirentType(inode.mode);
  if (!plus) return packer.Add(inode.nodeid, cookie, type, name);
  if (name == "." || name == "..") {
    // Nodeid 0: the kernel takes no reference for these, and libfuse sends them the same way.
    wire::EntryOut entry{};
    entry.attr.ino = inode.nodeid;
    entry.attr.mode = inode.mode;
    return packer.AddPlus(entry, cookie, type, name);
  }
  const wire::EntryOut entry =
      MakeEntry(inode.nodeid, kGeneration, AttrOf(inode), options_.entry, options_.attr);
  if (!packer.AddPlus(entry, cookie, type, name)) return false;
  // The kernel takes a lookup reference for every entry it receives, as for a LOOKUP reply.
  ++inode.nlookup;
  return true;
}

// ---- Extended attributes ----

int MemFs::SetXattr(uint64_t nodeid, const op::Setxattr& args) {
  Inode* inode = Find(nodeid);
  if (inode == nullptr) return ENOENT;
  const bool exists = inode->xattrs.contains(args.name);
  if ((args.flags() & XATTR_CREATE) != 0 && exists) return EEXIST;
  if ((args.flags() & XATTR_REPLACE) != 0 && !exists) return ENODATA;
  std::string value(reinterpret_cast<const char*>(args.value.data()), args.value.size());
  inode->xattrs.insert_or_assign(std::string(args.name), std::move(value));
  inode->ctime = Now();
  return 0;
}

int MemFs::XattrValue(uint64_t nodeid, std::string_view name, std::string* value) const {
  const Inode* inode = Find(nodeid);
  if (inode == nullptr) return ENOENT;
  const auto it = inode->xattrs.find(name);
  if (it == inode->xattrs.end()) return ENODATA;
  *value = it->second;
  return 0;
}

// LISTXATTR's answer: every name followed by a NUL.
int MemFs::XattrNames(uint64_t nodeid, std::string* names) const {
  const Inode* inode = Find(nodeid);
  if (inode == nullptr) return ENOENT;
  for (const auto& [name, value] : inode->xattrs) {
    names->append(name);
    names->push_back('\0');
  }
  return 0;
}

int MemFs::RemoveXattr(uint64_t nodeid, std::string_view name) {
  Inode* inode = Find(nodeid);
  if (inode == nullptr) return ENOENT;
  const auto it = inode->xattrs.find(name);
  if (it == inode->xattrs.end()) return ENODATA;
  inode->xattrs.erase(it);
  inode->ctime = Now();
  return 0;
}

// ---- Handler ----

void MemFs::Init(const Negotiated& /*negotiated*/) { Enter(Opcode::kInit); }

void MemFs::Destroy() { Enter(Opcode::kDestroy); }

void MemFs::Lookup(const RequestContext& context, const op::Lookup& args, EntryReply reply) {
  if (!Begin(context, reply)) return;
  wire::EntryOut entry{};
  int error = 0;
  {
    std::lock_guard lock(mu_);
    ++lookups_[{context.nodeid(), std::string(args.name)}];
    error = LookupChild(context.nodeid(), args.name, &entry);
  }
  if (error == ENOENT && HasTimeout(options_.negative)) {
    reply.Ok(MakeNegativeEntry(options_.negative));
    return;
  }
  Answer(reply, error, entry);
}

void MemFs::Forget(const RequestContext& context, const op::Forget& args) {
  Enter(OpcodeOf(context));
  std::lock_guard lock(mu_);
  ForgetNode(context.nodeid(), args.nlookup());
}

void MemFs::BatchForget(const RequestContext& context, const op::BatchForget& args) {
  Enter(OpcodeOf(context));
  std::lock_guard lock(mu_);
  for (uint32_t i = 0; i < args.forgets.size(); ++i) {
    const wire::ForgetOne forget = args.forgets[i];
    ForgetNode(forget.nodeid, forget.nlookup);
  }
}

// Only counted: the transport raises the request's interrupted flag, which Begin checks.
void MemFs::Interrupt(const RequestContext& context, const op::Interrupt& /*args*/) {
  Enter(OpcodeOf(context));
}

void MemFs::Getattr(const RequestContext& context, const op::Getattr& /*args*/, AttrReply reply) {
  if (!Begin(context, reply)) return;
  wire::AttrOut out{};
  int error = ENOENT;
  {
    std::lock_guard lock(mu_);
    if (const Inode* inode = Find(context.nodeid()); inode != nullptr) {
      out = MakeAttrOut(AttrOf(*inode), options_.attr);
      error = 0;
    }
  }
  Answer(reply, error, out);
}

void MemFs::Setattr(const RequestContext& context, const op::Setattr& args, AttrReply reply) {
  if (!Begin(context, reply)) return;
  wire::AttrOut out{};
  int error = ENOENT;
  {
    std::lock_guard lock(mu_);
    if (Inode* inode = Find(context.nodeid()); inode != nullptr) {
      error = SetAttributes(*inode, args);
      out = MakeAttrOut(AttrOf(*inode), options_.attr);
    }
  }
  Answer(reply, error, out);
}

void MemFs::Readlink(const RequestContext& context, const op::Readlink& /*args*/, DataReply reply) {
  if (!Begin(context, reply)) return;
  std::string target;
  int error = 0;
  {
    std::lock_guard lock(mu_);
    const Inode* inode = Find(context.nodeid());
    error = inode == nullptr ? ENOENT : !S_ISLNK(inode->mode) ? EINVAL : 0;
    if (error == 0) target = inode->target;
  }
  Answer(reply, error, AsBytes(std::string_view(target)));
}

void MemFs::Symlink(const RequestContext& context, const op::Symlink& args, EntryReply reply) {
  if (!Begin(context, reply)) return;
  const NodeSpec spec{
      .mode = S_IFLNK | 0777, .uid = context.uid(), .gid = context.gid(), .contents = args.target};
  wire::EntryOut entry{};
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = MakeNode(context.nodeid(), args.name, spec, &entry);
  }
  Answer(reply, error, entry);
}

void MemFs::Mknod(const RequestContext& context, const op::Mknod& args, EntryReply reply) {
  if (!Begin(context, reply)) return;
  const NodeSpec spec{.mode = ModeWithUmask(args.mode() & S_IFMT, args.mode(), args.umask()),
                      .uid = context.uid(),
                      .gid = context.gid(),
                      .rdev = args.rdev()};
  wire::EntryOut entry{};
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = MakeNode(context.nodeid(), args.name, spec, &entry);
  }
  Answer(reply, error, entry);
}

void MemFs::Mkdir(const RequestContext& context, const op::Mkdir& args, EntryReply reply) {
  if (!Begin(context, reply)) return;
  const NodeSpec spec{.mode = ModeWithUmask(S_IFDIR, args.mode(), args.umask()),
                      .uid = context.uid(),
                      .gid = context.gid()};
  wire::EntryOut entry{};
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = MakeNode(context.nodeid(), args.name, spec, &entry);
  }
  Answer(reply, error, entry);
}

void MemFs::Unlink(const RequestContext& context, const op::Unlink& args, EmptyReply reply) {
  if (!Begin(context, reply)) return;
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = RemoveEntry(context.nodeid(), args.name, /*directory=*/false);
  }
  Answer(reply, error);
}

void MemFs::Rmdir(const RequestContext& context, const op::Rmdir& args, EmptyReply reply) {
  if (!Begin(context, reply)) return;
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = RemoveEntry(context.nodeid(), args.name, /*directory=*/true);
  }
  Answer(reply, error);
}

void MemFs::Rename(const RequestContext& context, const op::Rename& args, EmptyReply reply) {
  if (!Begin(context, reply)) return;
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = RenameEntry(context.nodeid(), args);
  }
  Answer(reply, error);
}

void MemFs::Link(const RequestContext& context, const op::Link& args, EntryReply reply) {
  if (!Begin(context, reply)) return;
  wire::EntryOut entry{};
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = LinkNode(args.oldnodeid(), context.nodeid(), args.new_name, &entry);
  }
  Answer(reply, error, entry);
}

void MemFs::Open(const RequestContext& context, const op::Open& args, OpenReply reply) {
  if (!Begin(context, reply)) return;
  wire::OpenOut open{};
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = OpenFile(context.nodeid(), args.flags(), &open);
  }
  Answer(reply, error, open);
}

void MemFs::Create(const RequestContext& context, const op::Create& args, CreateReply reply) {
  if (!Begin(context, reply)) return;
  wire::EntryOut entry{};
  wire::OpenOut open{};
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = CreateOrOpen(context, args, &entry, &open);
  }
  Answer(reply, error, entry, open);
}

void MemFs::Read(const RequestContext& context, const op::Read& args, DataReply reply) {
  if (!Begin(context, reply)) return;
  std::string data;
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = ReadFile(context.nodeid(), args, &data);
  }
  Answer(reply, error, AsBytes(std::string_view(data)));
}

void MemFs::Write(const RequestContext& context, const op::Write& args, CountReply reply) {
  if (!Begin(context, reply)) return;
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = WriteFile(context.nodeid(), args);
  }
  Answer(reply, error, uint64_t{args.data.size()});
}

void MemFs::Flush(const RequestContext& context, const op::Flush& /*args*/, EmptyReply reply) {
  if (Begin(context, reply)) reply.Ok();
}

void MemFs::Release(const RequestContext& context, const op::Release& args, EmptyReply reply) {
  if (!Begin(context, reply)) return;
  {
    std::lock_guard lock(mu_);
    handles_.erase(args.fh());
  }
  reply.Ok();
}

void MemFs::Fsync(const RequestContext& context, const op::Fsync& /*args*/, EmptyReply reply) {
  if (Begin(context, reply)) reply.Ok();
}

void MemFs::Statfs(const RequestContext& context, const op::Statfs& /*args*/, StatfsReply reply) {
  if (!Begin(context, reply)) return;
  wire::Kstatfs stats{};
  {
    std::lock_guard lock(mu_);
    stats = FilesystemStats();
  }
  reply.Ok(stats);
}

void MemFs::Opendir(const RequestContext& context, const op::Opendir& /*args*/, OpenReply reply) {
  if (!Begin(context, reply)) return;
  wire::OpenOut open{};
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = OpenDir(context.nodeid(), &open);
  }
  Answer(reply, error, open);
}

void MemFs::Readdir(const RequestContext& context, const op::Readdir& args, DirReply reply) {
  if (Begin(context, reply)) ReadDirectory(context, args.fh(), /*plus=*/false, std::move(reply));
}

void MemFs::Readdirplus(const RequestContext& context, const op::Readdirplus& args,
                        DirPlusReply reply) {
  if (Begin(context, reply)) ReadDirectory(context, args.fh(), /*plus=*/true, std::move(reply));
}

void MemFs::Releasedir(const RequestContext& context, const op::Releasedir& args,
                       EmptyReply reply) {
  if (!Begin(context, reply)) return;
  {
    std::lock_guard lock(mu_);
    handles_.erase(args.fh());
  }
  reply.Ok();
}

void MemFs::Fsyncdir(const RequestContext& context, const op::Fsyncdir& /*args*/,
                     EmptyReply reply) {
  if (Begin(context, reply)) reply.Ok();
}

// No permission checks: without allow_other only the mounting user reaches the mount, and with
// default_permissions the kernel checks the modes itself and sends no ACCESS.
void MemFs::Access(const RequestContext& context, const op::Access& /*args*/, EmptyReply reply) {
  if (Begin(context, reply)) reply.Ok();
}

void MemFs::Setxattr(const RequestContext& context, const op::Setxattr& args, EmptyReply reply) {
  if (!Begin(context, reply)) return;
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = SetXattr(context.nodeid(), args);
  }
  Answer(reply, error);
}

void MemFs::Getxattr(const RequestContext& context, const op::Getxattr& args, XattrReply reply) {
  if (!Begin(context, reply)) return;
  std::string value;
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = XattrValue(context.nodeid(), args.name, &value);
  }
  AnswerXattr(reply, error, value, args.size());
}

void MemFs::Listxattr(const RequestContext& context, const op::Listxattr& args, XattrReply reply) {
  if (!Begin(context, reply)) return;
  std::string names;
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = XattrNames(context.nodeid(), &names);
  }
  AnswerXattr(reply, error, names, args.size());
}

void MemFs::Removexattr(const RequestContext& context, const op::Removexattr& args,
                        EmptyReply reply) {
  if (!Begin(context, reply)) return;
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = RemoveXattr(context.nodeid(), args.name);
  }
  Answer(reply, error);
}

void MemFs::Lseek(const RequestContext& context, const op::Lseek& args, LseekReply reply) {
  if (!Begin(context, reply)) return;
  uint64_t offset = 0;
  int error = 0;
  {
    std::lock_guard lock(mu_);
    error = SeekDataOrHole(context.nodeid(), args, &offset);
  }
  Answer(reply, error, offset);
}

}  // namespace ringfuse::examples
