// The passthrough filesystem: SOURCE served through the mount, read-write (or read-only with
// -o ro and in revisions mode, where every change is answered EROFS).
//
// Every access to SOURCE goes through the O_PATH fds of the InodeTable with *at() calls on
// single plain names, O_NOFOLLOW, or through /proc/self/fd/N of such an fd: no path string is
// ever resolved, so no name, symlink or rename race reaches outside SOURCE. Operations that
// create or change something run as the caller (credentials.h).
//
// The code is split by job: passthrough_fs.cc (nodes and their attributes), passthrough_names.cc
// (directory entries: create, link, remove, rename), passthrough_files.cc (open files and their
// I/O), passthrough_locks.cc, passthrough_dirs.cc (listing), passthrough_xattr.cc. What a
// handover and a crash need of it is in ../handover/fs_handover.h and ../crash/kept_state.h,
// through Parts; changes made once across a crash in ../crash/changes_once.h.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "base/errno.h"
#include "daemon/crash/changes_once.h"
#include "daemon/fs/backing_ids.h"
#include "daemon/fs/dir_handle.h"
#include "daemon/fs/file_handle.h"
#include "daemon/fs/open_handles.h"
#include "daemon/inodes/inode_table.h"
#include "daemon/inodes/node_pruner.h"
#include "daemon/locks/lock_waiter.h"
#include "daemon/locks/owner_locks.h"
#include "daemon/options.h"
#include "ringfuse/backing.h"
#include "ringfuse/handler.h"
#include "ringfuse/notifier.h"

namespace ringfuse::daemon {

class PassthroughFs : public Handler {
 public:
  // `root` is an O_PATH fd to SOURCE.
  PassthroughFs(base::UniqueFd root, const DaemonOptions& options);

  void Init(const Negotiated& negotiated) override;

  // Kernel passthrough (-o passthrough): for SessionOptions::backing_files. Regular files are
  // handed to the kernel, which reads and writes them without asking the daemon.
  BackingFiles& backing_files() { return backing_files_; }
  // Asks the kernel to drop nodes the daemon cannot close (node_pruner.h). Set once, right after
  // Session::Start, where the kernel has PRUNE.
  void SetPruner(NodePruner::Send send) { pruner_.Set(std::move(send)); }
  // The connection's notifier (not owned), for what the kernel must learn before a reply: a
  // change that cleared set-ID bits. Set once, right after Session::Start; until then nothing is
  // sent, and the kernel's attribute timeout bounds what it keeps.
  void SetNotifier(Notifier* notifier) { notifier_.store(notifier, std::memory_order_release); }
  // Whether kernel passthrough can work on this connection: agreed at INIT, and a backing file
  // can be registered (it needs CAP_SYS_ADMIN in the initial user namespace). Probes once.
  absl::Status CheckPassthroughWorks() const;

  // Nodes and attributes.
  void Lookup(const RequestContext& context, const op::Lookup& args, EntryReply reply) override;
  void Forget(const RequestContext& context, const op::Forget& args) override;
  void BatchForget(const RequestContext& context, const op::BatchForget& args) override;
  void Getattr(const RequestContext& context, const op::Getattr& args, AttrReply reply) override;
  void Setattr(const RequestContext& context, const op::Setattr& args, AttrReply reply) override;
  void Statx(const RequestContext& context, const op::Statx& args, StatxReply reply) override;
  void Access(const RequestContext& context, const op::Access& args, EmptyReply reply) override;
  void Readlink(const RequestContext& context, const op::Readlink& args, DataReply reply) override;
  void Statfs(const RequestContext& context, const op::Statfs& args, StatfsReply reply) override;

  // Directory entries.
  void Symlink(const RequestContext& context, const op::Symlink& args, EntryReply reply) override;
  void Mknod(const RequestContext& context, const op::Mknod& args, EntryReply reply) override;
  void Mkdir(const RequestContext& context, const op::Mkdir& args, EntryReply reply) override;
  void Link(const RequestContext& context, const op::Link& args, EntryReply reply) override;
  void Unlink(const RequestContext& context, const op::Unlink& args, EmptyReply reply) override;
  void Rmdir(const RequestContext& context, const op::Rmdir& args, EmptyReply reply) override;
  void Rename(const RequestContext& context, const op::Rename& args, EmptyReply reply) override;

  // Open files.
  void Open(const RequestContext& context, const op::Open& args, OpenReply reply) override;
  void Create(const RequestContext& context, const op::Create& args, CreateReply reply) override;
  void Tmpfile(const RequestContext& context, const op::Tmpfile& args, CreateReply reply) override;
  void Read(const RequestContext& context, const op::Read& args, DataReply reply) override;
  void Write(const RequestContext& context, const op::Write& args, CountReply reply) override;
  void Flush(const RequestContext& context, const op::Flush& args, EmptyReply reply) override;
  void Fsync(const RequestContext& context, const op::Fsync& args, EmptyReply reply) override;
  void Release(const RequestContext& context, const op::Release& args, EmptyReply reply) override;
  void Fallocate(const RequestContext& context, const op::Fallocate& args,
                 EmptyReply reply) override;
  void Lseek(const RequestContext& context, const op::Lseek& args, LseekReply reply) override;
  void CopyFileRange(const RequestContext& context, const op::CopyFileRange& args,
                     CountReply reply) override;

  // Locks.
  void Getlk(const RequestContext& context, const op::Getlk& args, LockReply reply) override;
  void Setlk(const RequestContext& context, const op::Setlk& args, EmptyReply reply) override;
  void Interrupt(const RequestContext& context, const op::Interrupt& args) override;

  // Directories.
  void Opendir(const RequestContext& context, const op::Opendir& args, OpenReply reply) override;
  void Readdir(const RequestContext& context, const op::Readdir& args, DirReply reply) override;
  void Readdirplus(const RequestContext& context, const op::Readdirplus& args,
                   DirPlusReply reply) override;
  void Releasedir(const RequestContext& context, const op::Releasedir& args,
                  EmptyReply reply) override;
  void Fsyncdir(const RequestContext& context, const op::Fsyncdir& args, EmptyReply reply) override;

  // Extended attributes.
  void Setxattr(const RequestContext& context, const op::Setxattr& args, EmptyReply reply) override;
  void Getxattr(const RequestContext& context, const op::Getxattr& args, XattrReply reply) override;
  void Listxattr(const RequestContext& context, const op::Listxattr& args,
                 XattrReply reply) override;
  void Removexattr(const RequestContext& context, const op::Removexattr& args,
                   EmptyReply reply) override;

  // The parts of the filesystem that outlive a daemon: what a handover carries
  // (handover/fs_handover.h) and what a crash recovers (crash/kept_state.h), reached through
  // this for them alone. The handlers share these parts; nothing else changes them.
  struct Parts {
    InodeTable& inodes;
    OpenHandles& open;
    ChangesOnce& changes_once;
    OwnerLocks& owner_locks;
    BackingFiles& backing_files;
    BackingIds& backing_ids;
  };
  Parts parts() {
    return {inodes_, open_, changes_once_, owner_locks_, backing_files_, backing_ids_};
  }

  const InodeTable& inodes() const { return inodes_; }
  InodeTable& inodes() { return inodes_; }
  // What the filesystem holds and has served, now: for ringfuse-ctl and tests.
  struct Counts {
    size_t open_handles;        // files and directories the kernel has not released (yet)
    size_t lock_owner_opens;    // lock owners' opens held (owner_locks.h)
    size_t pending_lock_waits;  // lock requests waiting for their lock
    uint64_t reads;     // READs served: none for a file the kernel reads through passthrough
    uint64_t writes;    // WRITEs served, likewise
    uint64_t listings;  // READDIRs and READDIRPLUSes served
  };
  Counts counts() const;

 private:
  // The directory `nodeid` where `name` is to change, or the error to answer (EROFS in
  // read-only mode, EINVAL for a name that is not plain, ESTALE for a forgotten node).
  base::ErrnoOr<std::shared_ptr<const Inode>> ChangeableDirectory(uint64_t nodeid,
                                                                  std::string_view name);
  // Makes the new entry `name` in directory `context.nodeid()` as the caller, with `make`
  // (an *at() call returning 0 or -1 with errno), then answers with the node it made.
  void AddEntry(const RequestContext& context, std::string_view name, uint32_t umask,
                absl::FunctionRef<int(int dir_fd, const char* name)> make, EntryReply reply);
  // Removes `name` from directory `context.nodeid()` as the caller with `remove`.
  void RemoveEntry(const RequestContext& context, std::string_view name,
                   absl::FunctionRef<int(int dir_fd, const char* name)> remove, EmptyReply reply);
  // Removes or moves `name` in directory `context.nodeid()` as the caller with `change`, once
  // across crashes (changes_once.h: `kind`, at `name` and, for a move, `to_dir_fd`'s `to_name`),
  // then tells the inode table with `changed`. `to_dir_fd`, a rename's target directory, is
  // checked for the caller's permissions too (-1 for none).
  using NameCall = absl::FunctionRef<int(int dir_fd, const char* name)>;
  void ChangeEntry(const RequestContext& context, std::string_view name, ChangeKind kind,
                   int to_dir_fd, const char* to_name, NameCall change,
                   absl::FunctionRef<void()> changed, EmptyReply reply);
  // Looks `name` up in `parent` (one kernel lookup) into `entry`.
  // `made`: the name was just made (InodeTable::Lookup's `maybe_open` is false). `cacheable`:
  // NamesCacheableUnder(parent), where the caller has it already.
  base::Errno EntryOf(uint64_t parent, std::string_view name, wire::EntryOut& entry,
                      bool made = false, std::optional<bool> cacheable = std::nullopt);
  // Whether names under directory `dir_node` may stay in the kernel's cache for every user
  // (search_permission.h).
  bool NamesCacheableUnder(uint64_t dir_node);
  wire::EntryOut EntryFor(const Found& found) const;
  base::Errno ApplySetattr(int path_fd, const struct stat& st, const op::Setattr& change);
  // Tells the kernel to drop the attributes it caches for `nodeid` (attributes only, waiting
  // for its answer): for a change whose reply carries none.
  void InvalidateAttributes(uint64_t nodeid) const;
  // The umask the backing call applies: the request's when the kernel left it to us.
  mode_t CreateUmask(uint32_t request_umask) const { return dont_mask_ ? request_umask : 0; }
  // FOPEN_* flags for an OPENDIR reply.
  uint32_t DirOpenFlags() const;
  // The backing open's flags for a client's open flags.
  int BackingFlags(int flags) const;
  // Opens the backing file of `path_fd` with `flags` for the caller of `context`, who keeps the
  // capabilities `keep` (credentials.h) for it.
  base::ErrnoOr<base::UniqueFd> OpenBackingFile(const RequestContext& context, int path_fd,
                                                int flags, uint64_t keep) const;
  // Creates `name` in `dir_fd` as the caller, or opens it if it is a regular file already and
  // `flags` do not say O_EXCL.
  base::ErrnoOr<base::UniqueFd> CreateOrOpen(const RequestContext& context, int dir_fd,
                                             const std::string& name, int flags, mode_t mode,
                                             uint32_t umask) const;
  // A handle for a newly opened backing fd, handed to the kernel when passthrough is on, with an
  // O_DIRECT twin when the daemon serves a client's `direct` open: what to answer the open with.
  wire::OpenOut NewHandle(base::UniqueFd fd, uint64_t nodeid, int flags, bool direct);
  void List(uint64_t dir_node, uint64_t fh, bool plus, DirListingReply reply);
  void Flock(const RequestContext& context, const op::Setlk& args, EmptyReply reply);
  void ChangeXattr(const RequestContext& context, EmptyReply reply,
                   absl::FunctionRef<int(const char* path)> change);
  // Answers a lock request: at once when `attempt` is done, else (for SETLKW) when it is.
  void AnswerLock(const RequestContext& context, bool wait, LockWaiter::Attempt attempt,
                  EmptyReply reply);
  // The FSYNC or FSYNCDIR of an fh found nowhere: EBADF for one of this daemon's own. For a dead
  // daemon's (a kernel-passthrough file writes on without it) the file is closed here, so the
  // whole backing filesystem is synced: that includes what was written to it.
  void SyncUnknown(uint64_t fh, EmptyReply& reply);

  InodeTable inodes_;
  const DaemonOptions options_;
  bool dont_mask_ = false;           // from Init, before any other request
  bool passthrough_agreed_ = false;  // likewise
  NodePruner pruner_{inodes_};
  std::atomic<Notifier*> notifier_{nullptr};  // set once by SetNotifier
  struct Served {
    std::atomic<uint64_t> reads{0};
    std::atomic<uint64_t> writes{0};
    std::atomic<uint64_t> listings{0};  // READDIR and READDIRPLUS
  } served_;
  // Before the lock machinery, which may still use a handle while it winds down.
  OpenHandles open_;
  ChangesOnce changes_once_;  // changes made once across crashes
  OwnerLocks owner_locks_;
  LockWaiter lock_waiter_;
  BackingFiles backing_files_;  // before the ids it registers
  BackingIds backing_ids_;
};

}  // namespace ringfuse::daemon
