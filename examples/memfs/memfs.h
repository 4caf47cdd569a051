// memfs: a complete read-write filesystem kept in memory, written against ringfuse's public API
// alone (include/ringfuse/). It shows how a Handler answers every operation a real tree needs:
// files (create, read, write, truncate, lseek), directories (readdir and readdirplus, with the
// lookup reference each entry hands the kernel), symlinks, device nodes, hard links, xattrs,
// rename with RENAME_NOREPLACE and RENAME_EXCHANGE, and FORGET, which frees unlinked nodes once
// the kernel drops its last reference. main.cc mounts it; ringfuse's transport tests mount it too.
//
// For those tests MemFs also lets its owner change the tree behind the kernel's back (AddFile,
// SetContents, ...; what a notification test needs) and records the traffic it saw: requests per
// opcode, LOOKUPs per name, the lookup references the kernel holds per node. SetBeforeOp holds
// any request in flight.
//
// Thread-safe: transports call it from many threads. One mutex guards the tree; replies are sent
// after it is released, so a transport that blocks in SendReply never blocks other requests.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "ringfuse/handler.h"

namespace ringfuse::examples {

class MemFs : public Handler {
 public:
  struct Options {
    Timeout entry{1, 0};
    Timeout attr{1, 0};
    // Zero: a missing name is answered with ENOENT. Otherwise with a negative entry (nodeid 0)
    // that the kernel caches for this long.
    Timeout negative{0, 0};
    // FOPEN_* flags for every OPEN and CREATE, e.g. wire::kFopenDirectIo to force reads through.
    uint32_t open_flags = 0;
    // FOPEN_* flags for every OPENDIR, e.g. wire::kFopenCacheDir to let the kernel cache listings.
    uint32_t opendir_flags = 0;
  };

  // Called at the start of every counted request (see RequestCount), on the transport's thread,
  // after the count goes up and before the tree is touched. Blocking in it keeps the request in
  // flight; a request whose interrupted flag is raised meanwhile is answered EINTR.
  using BeforeOp = std::function<void(Opcode)>;

  MemFs();
  explicit MemFs(const Options& options);

  // Population by the owner; these bypass the kernel and take no lookup references. Each returns
  // the new node's id, or 0 when `parent` is not a directory or `name` is taken.
  uint64_t AddFile(uint64_t parent, std::string_view name, std::string_view contents,
                   uint32_t mode = 0644);
  uint64_t AddDir(uint64_t parent, std::string_view name, uint32_t mode = 0755);
  uint64_t AddSymlink(uint64_t parent, std::string_view name, std::string_view target);
  // Inspection and changes behind the kernel's back (what notifications are for).
  // FindChild returns 0 when there is no such entry; the others return false or nothing when
  // the node is missing or of the wrong kind.
  uint64_t FindChild(uint64_t parent, std::string_view name) const;
  bool SetSymlinkTarget(uint64_t nodeid, std::string_view target);
  bool SetContents(uint64_t nodeid, std::string_view contents);
  std::optional<std::string> Contents(uint64_t nodeid) const;
  // Removes an entry as UNLINK or RMDIR would (a directory must be empty).
  bool Remove(uint64_t parent, std::string_view name);

  // Observability.
  // Requests with this wire opcode: INIT, DESTROY, FORGET, BATCH_FORGET, INTERRUPT and every
  // operation overridden below. The rest (STATX, GETLK, FALLOCATE, ...) get Handler's ENOSYS
  // without reaching MemFs, so they count 0.
  uint64_t RequestCount(Opcode opcode) const;
  // LOOKUP requests for `name` in `parent`, whether or not the name existed.
  uint64_t LookupCount(uint64_t parent, std::string_view name) const;
  // Lookup references the kernel holds: entries handed out minus FORGETs; 0 for unknown nodes.
  uint64_t KernelRefs(uint64_t nodeid) const;
  // Open file and directory handles not yet released.
  size_t OpenHandleCount() const;
  // Live nodes, root included: unlinked nodes go once the kernel forgets them.
  size_t NodeCount() const;

  void SetBeforeOp(BeforeOp hook);

  // Handler.
  void Init(const Negotiated& negotiated) override;
  void Destroy() override;
  void Lookup(const RequestContext& context, const op::Lookup& args, EntryReply reply) override;
  void Forget(const RequestContext& context, const op::Forget& args) override;
  void BatchForget(const RequestContext& context, const op::BatchForget& args) override;
  void Interrupt(const RequestContext& context, const op::Interrupt& args) override;
  void Getattr(const RequestContext& context, const op::Getattr& args, AttrReply reply) override;
  void Setattr(const RequestContext& context, const op::Setattr& args, AttrReply reply) override;
  void Readlink(const RequestContext& context, const op::Readlink& args, DataReply reply) override;
  void Symlink(const RequestContext& context, const op::Symlink& args, EntryReply reply) override;
  void Mknod(const RequestContext& context, const op::Mknod& args, EntryReply reply) override;
  void Mkdir(const RequestContext& context, const op::Mkdir& args, EntryReply reply) override;
  void Unlink(const RequestContext& context, const op::Unlink& args, EmptyReply reply) override;
  void Rmdir(const RequestContext& context, const op::Rmdir& args, EmptyReply reply) override;
  void Rename(const RequestContext& context, const op::Rename& args, EmptyReply reply) override;
  void Link(const RequestContext& context, const op::Link& args, EntryReply reply) override;
  void Open(const RequestContext& context, const op::Open& args, OpenReply reply) override;
  void Create(const RequestContext& context, const op::Create& args, CreateReply reply) override;
  void Read(const RequestContext& context, const op::Read& args, DataReply reply) override;
  void Write(const RequestContext& context, const op::Write& args, CountReply reply) override;
  void Flush(const RequestContext& context, const op::Flush& args, EmptyReply reply) override;
  void Release(const RequestContext& context, const op::Release& args, EmptyReply reply) override;
  void Fsync(const RequestContext& context, const op::Fsync& args, EmptyReply reply) override;
  void Statfs(const RequestContext& context, const op::Statfs& args, StatfsReply reply) override;
  void Opendir(const RequestContext& context, const op::Opendir& args, OpenReply reply) override;
  void Readdir(const RequestContext& context, const op::Readdir& args, DirReply reply) override;
  void Readdirplus(const RequestContext& context, const op::Readdirplus& args,
                   DirPlusReply reply) override;
  void Releasedir(const RequestContext& context, const op::Releasedir& args,
                  EmptyReply reply) override;
  void Fsyncdir(const RequestContext& context, const op::Fsyncdir& args, EmptyReply reply) override;
  void Access(const RequestContext& context, const op::Access& args, EmptyReply reply) override;
  void Setxattr(const RequestContext& context, const op::Setxattr& args, EmptyReply reply) override;
  void Getxattr(const RequestContext& context, const op::Getxattr& args, XattrReply reply) override;
  void Listxattr(const RequestContext& context, const op::Listxattr& args,
                 XattrReply reply) override;
  void Removexattr(const RequestContext& context, const op::Removexattr& args,
                   EmptyReply reply) override;
  void Lseek(const RequestContext& context, const op::Lseek& args, LseekReply reply) override;

 private:
  struct Inode {
    using Children = std::map<std::string, uint64_t, std::less<>>;

    uint64_t nodeid = 0;
    uint32_t mode = 0;
    uint32_t uid = 0;
    uint32_t gid = 0;
    uint32_t nlink = 1;
    uint32_t rdev = 0;
    timespec atime{};
    timespec mtime{};
    timespec ctime{};
    std::string data;     // regular files
    std::string target;   // symlinks
    Children children;    // directories, in readdir order
    uint64_t parent = 0;  // directories: for ".."
    std::map<std::string, std::string, std::less<>> xattrs;
    uint64_t nlookup = 0;  // lookup references the kernel holds
  };
  using Children = Inode::Children;

  // What a new node is made of; everything else starts empty.
  struct NodeSpec {
    uint32_t mode = 0;
    uint32_t uid = 0;
    uint32_t gid = 0;
    uint32_t rdev = 0;
    std::string_view contents = {};  // a file's data or a symlink's target
  };

  static uint64_t SizeOf(const Inode& inode);
  static wire::Attr AttrOf(const Inode& inode);
  static void MoveUnder(Inode& child, Inode& from, Inode& to);
  static int CheckResizable(const Inode& inode, uint64_t size);
  static void Resize(Inode& inode, uint64_t size);
  static int SetAttributes(Inode& inode, const op::Setattr& change);

  // Counts the request and runs the hook.
  void Enter(Opcode opcode);
  // Enter, then answers EINTR if the request was interrupted while the hook held it. Returns
  // false when the request is answered already.
  template <typename Reply>
  bool Begin(const RequestContext& context, Reply& reply);
  uint64_t AddDirectly(uint64_t parent, std::string_view name, const NodeSpec& spec);
  void ReadDirectory(const RequestContext& context, uint64_t fh, bool plus, DirListingReply reply);

  // Everything below runs with mu_ held. Those returning int return 0 or an errno.
  Inode* Find(uint64_t nodeid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const Inode* Find(uint64_t nodeid) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Inode* FindDir(uint64_t nodeid, int* error) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // 0 when `parent` is missing or has no such entry.
  uint64_t ChildOf(uint64_t parent, std::string_view name) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // An entry for the kernel, which takes a lookup reference with it.
  wire::EntryOut EntryForKernel(Inode& inode) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int AddChild(uint64_t parent, std::string_view name, const NodeSpec& spec, uint64_t* nodeid)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int LookupChild(uint64_t parent, std::string_view name, wire::EntryOut* entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int MakeNode(uint64_t parent, std::string_view name, const NodeSpec& spec, wire::EntryOut* entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ForgetNode(uint64_t nodeid, uint64_t nlookup) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReclaimIfUnused(const Inode& inode) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  int RemoveEntry(uint64_t parent, std::string_view name, bool directory)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropLink(Inode& parent, Inode& child) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int RenameEntry(uint64_t old_parent, const op::Rename& args) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int ReplaceTarget(Inode& dir, Children::iterator target, const Inode& source)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ExchangeEntries(Inode& from, uint64_t& source_slot, Inode& to, uint64_t& target_slot)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int LinkNode(uint64_t nodeid, uint64_t new_parent, std::string_view new_name,
               wire::EntryOut* entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  uint64_t NewHandle() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int CheckHandle(uint64_t fh) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int OpenFile(uint64_t nodeid, int flags, wire::OpenOut* open) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int CreateOrOpen(const RequestContext& context, const op::Create& args, wire::EntryOut* entry,
                   wire::OpenOut* open) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int ReadFile(uint64_t nodeid, const op::Read& args, std::string* data)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int WriteFile(uint64_t nodeid, const op::Write& args) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  wire::Kstatfs FilesystemStats() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int SeekDataOrHole(uint64_t nodeid, const op::Lseek& args, uint64_t* offset)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  int OpenDir(uint64_t nodeid, wire::OpenOut* open) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int FillDirectory(uint64_t nodeid, uint64_t fh, uint64_t offset, bool plus, DirentPacker& packer)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Inode& DotDot(Inode& dir) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool PackEntry(DirentPacker& packer, bool plus, uint64_t cookie, Inode& inode,
                 std::string_view name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  int SetXattr(uint64_t nodeid, const op::Setxattr& args) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int XattrValue(uint64_t nodeid, std::string_view name, std::string* value) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int XattrNames(uint64_t nodeid, std::string* names) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int RemoveXattr(uint64_t nodeid, std::string_view name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  std::array<std::atomic<uint64_t>, kMaxOpcode + 1> requests_{};

  // std::mutex rather than absl::Mutex: ThreadSanitizer sees only the locking it intercepts
  // (pthread's), and Debian's abseil is not built with it, so its Mutex is invisible there.
  mutable std::mutex hook_mu_;
  std::shared_ptr<const BeforeOp> before_op_ ABSL_GUARDED_BY(hook_mu_);

  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Inode> inodes_ ABSL_GUARDED_BY(mu_);
  uint64_t next_nodeid_ ABSL_GUARDED_BY(mu_) = wire::kRootId + 1;
  std::set<uint64_t> handles_ ABSL_GUARDED_BY(mu_);  // open file and directory handles
  uint64_t next_fh_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<std::pair<uint64_t, std::string>, uint64_t> lookups_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ringfuse::examples
