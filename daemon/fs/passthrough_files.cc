// PassthroughFs: open regular files and their I/O, and kernel passthrough.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "daemon/access/credentials.h"
#include "daemon/fs/backing.h"
#include "daemon/fs/passthrough_fs.h"
#include "daemon/fs/thread_buffer.h"
#include "daemon/inodes/fd_room.h"

namespace ringfuse::daemon {
namespace {

bool Writes(int flags) { return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC); }

// HANDLE_KILLPRIV_V2 leaves clearing set-user-ID and set-group-ID to the daemon: it makes each
// change as the caller, without CAP_FSETID unless the kernel says the caller has it (the
// request's KILL_SUIDGID flag absent), and the backing filesystem then clears them by the same
// rules as for the caller's own change. The kernel's flushes of its page cache carry no
// caller (uid 0) and are made as root, as its writeback is natively.
uint64_t CallerKeeps(bool kill_suidgid) { return kill_suidgid ? 0 : kCapabilityFsetid; }

// __FMODE_EXEC in OPEN's flags: the kernel opens a file for execve with the right to execute
// it, not to read it (fs/exec.c: MAY_EXEC only), and passes that mode on (fs/fuse/file.c).
constexpr int kOpenForExec = 040;

// The set-user-ID and set-group-ID bits of the file `fd` is open on (O_PATH will do); none where
// they cannot be read.
mode_t SetIdBits(int fd) {
  struct stat st;
  return ::fstat(fd, &st) == 0 ? st.st_mode & (S_ISUID | S_ISGID) : 0;
}

// Kernel passthrough writes reach the backing file with the credentials it was registered with,
// the daemon's, for whoever writes, so the backing filesystem would keep set-user-ID and
// set-group-ID. Every open of a set-ID file is served by the daemon instead, whose WRITEs carry
// the caller. Not covered: a file made set-ID while open in passthrough; until those opens
// close, the kernel fails further cached opens of it with EIO (fs/fuse/iomode.c), which
// BackingIds would have to be asked about to avoid.
bool SetId(int fd) { return SetIdBits(fd) != 0; }

// Whether a change cleared set-ID bits, from the file's bits before and after it. Read only for a
// change made as a caller without CAP_FSETID (`watched`): no other clears them.
class SetIdWatch {
 public:
  SetIdWatch(int fd, bool watched) : fd_(fd), before_(watched ? SetIdBits(fd) : 0) {}
  bool Cleared() const { return before_ != 0 && SetIdBits(fd_) != before_; }

 private:
  const int fd_;
  const mode_t before_;
};

// The kernel opens FIFOs, sockets and device nodes itself (fs/fuse/inode.c gives them the
// special-file operations: a pipe, or the device's driver) and sends OPEN only for the rest.
// One of these came from a writer of /dev/fuse that is not the kernel: opened here, a FIFO
// without a peer would block the worker for good, and a device would be opened by the daemon.
// Refused as open(2) refuses what has nothing to open behind it (a socket, a device without a
// driver): ENXIO.
base::Errno SpecialFileError(int path_fd) {
  struct stat st;
  if (::fstat(path_fd, &st) != 0) return base::Errno::Last();
  const bool special =
      S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode);
  return special ? base::Errno(ENXIO) : base::Errno();
}

}  // namespace

absl::Status PassthroughFs::CheckPassthroughWorks() const {
  if (!passthrough_agreed_) {
    return absl::FailedPreconditionError(
        "-o passthrough: the kernel did not offer FUSE_PASSTHROUGH at INIT (Linux 6.9+ with "
        "CONFIG_FUSE_PASSTHROUGH is needed)");
  }
  // A memfd stands in for a backing file: registering one needs nothing from SOURCE.
  base::UniqueFd probe(::memfd_create("ringfused-passthrough-probe", MFD_CLOEXEC));
  if (!probe.valid()) return absl::InternalError("memfd_create failed for the passthrough probe");
  absl::StatusOr<BackingFile> backing = backing_files_.Open(probe.get());
  if (!backing.ok()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("-o passthrough cannot work here: %s", backing.status().message()));
  }
  return backing->Close();
}

int PassthroughFs::BackingFlags(int flags) const {
  // O_DIRECT goes to a second fd of its own (NewHandle): on this one it would fail the
  // unaligned transfers, the kernel's writeback and msync among them, that FUSE passes on.
  int backing = flags & ~O_DIRECT;
  if (options_.writeback_cache) {
    // The kernel reads pages around partial writes and places appends itself.
    if ((backing & O_ACCMODE) == O_WRONLY) backing = (backing & ~O_ACCMODE) | O_RDWR;
    backing &= ~O_APPEND;
  }
  return backing;
}

wire::OpenOut PassthroughFs::NewHandle(base::UniqueFd fd, uint64_t nodeid, int flags, bool direct) {
  auto handle = std::make_unique<FileHandle>(std::move(fd), flags);
  const std::string inode = open_.journaled() ? inodes_.handles().HandleOf(handle->fd()) : "";
  const auto add = [&](std::unique_ptr<FileHandle> opened) {
    return open_.AddFile(std::move(opened), nodeid, inode, flags);
  };
  if (options_.passthrough && !SetId(handle->fd())) {
    absl::StatusOr<int32_t> id =
        backing_ids_.Acquire(backing_files_, handle->fd(), handle->dev(), handle->ino());
    if (id.ok()) {
      // The kernel transfers the data itself, through a backing file it opens for this open
      // (backing_ids.h): O_DIRECT is not passed on (fs/backing-file.c, BACKING_IOCB_MASK), so a
      // client's O_DIRECT is not honoured here.
      handle->set_passthrough();
      return MakeOpenOut(add(std::move(handle)), wire::kFopenPassthrough, *id);
    }
    // Nothing registered for the inode: the daemon serves this open itself.
  }
  if (direct) {
    if (std::optional<DirectFile> direct_file = DirectFile::Open(handle->fd(), flags)) {
      handle->set_direct(std::move(*direct_file));
    }
  }
  uint32_t open_flags = options_.keep_cache ? wire::kFopenKeepCache : 0;
  if (!options_.cache) open_flags |= wire::kFopenDirectIo;
  return MakeOpenOut(add(std::move(handle)), open_flags);
}

void PassthroughFs::Open(const RequestContext& context, const op::Open& args, OpenReply reply) {
  if (options_.mount.read_only && Writes(args.flags())) return reply.Error(EROFS);
  const base::ErrnoOr<std::shared_ptr<const Inode>> inode_ref = inodes_.Get(context.nodeid());
  if (!inode_ref.ok()) return reply.Error(inode_ref.error().value());
  const Inode& inode = **inode_ref;
  if (const base::Errno error = SpecialFileError(inode.path.get()); !error.ok()) {
    return reply.Error(error.value());
  }
  const int flags = BackingFlags(args.flags());
  const SetIdWatch set_id(inode.path.get(), (flags & O_TRUNC) && args.kill_suid_gid());
  base::ErrnoOr<base::UniqueFd> fd = OpenBackingFile(
      context, inode.path.get(), flags, CallerKeeps(!(flags & O_TRUNC) || args.kill_suid_gid()));
  if (set_id.Cleared()) InvalidateAttributes(context.nodeid());
  if (!fd.ok()) return reply.Error(fd.error().value());
  reply.Ok(
      NewHandle(*std::move(fd), context.nodeid(), flags & ~kOpenForExec, args.flags() & O_DIRECT));
}

// An exec open is made as the daemon, read-only, once the caller is known to have the right to
// execute the file: opened as the caller it would need the right to read, which running a
// program does not (mode 0711, say).
base::ErrnoOr<base::UniqueFd> PassthroughFs::OpenBackingFile(const RequestContext& context,
                                                             int path_fd, int flags,
                                                             uint64_t keep) const {
  if (!(flags & kOpenForExec)) {
    return CallAsCaller(context, kCreatesNothing, [&] { return Reopen(path_fd, flags); }, keep,
                        {path_fd});
  }
  const base::Errno may_execute = CallAsCaller(
      context, kCreatesNothing,
      [&] {
        return base::Errno::OfCall(::faccessat(path_fd, "", X_OK, AT_EMPTY_PATH | AT_EACCESS));
      },
      0, {path_fd});
  if (!may_execute.ok()) return may_execute;
  return Reopen(path_fd, (flags & ~kOpenForExec & ~O_ACCMODE) | O_RDONLY);
}

// The kernel sends CREATE for a name it believes missing, which SOURCE may have meanwhile, as
// anything: a FIFO would block the worker in open, a device would be opened past the mount's
// nodev. So the name is created exclusively, and a name that exists is opened only when it is a
// regular file, through an O_PATH fd of that very inode; otherwise EEXIST, for which the kernel
// drops its stale entry (fs/fuse/dir.c), so the caller's next open finds what is there (ELOOP
// for a symlink, which the daemon never follows).
base::ErrnoOr<base::UniqueFd> PassthroughFs::CreateOrOpen(const RequestContext& context, int dir_fd,
                                                          const std::string& name, int flags,
                                                          mode_t mode, uint32_t umask) const {
  // Made again after an EMFILE (fd_room.h): the kernel takes the fd before it creates anything.
  base::ErrnoOr<base::UniqueFd> created = CallAsCaller(
      context, CreateUmask(umask),
      [&] {
        return OpenMakingRoom([&] {
          return base::FdOfCall(::openat(dir_fd, name.c_str(),
                                         flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
        });
      },
      0, {dir_fd});
  if (created.ok() || created.error() != base::Errno(EEXIST) || (flags & O_EXCL)) return created;
  const base::ErrnoOr<base::UniqueFd> existing =
      base::FdOfCall(::openat(dir_fd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!existing.ok()) return existing.error();
  struct stat st;
  if (::fstat(existing->get(), &st) != 0) return base::Errno::Last();
  // A symlink: what O_NOFOLLOW answers.
  if (!S_ISREG(st.st_mode)) return base::Errno(S_ISLNK(st.st_mode) ? ELOOP : EEXIST);
  return CallAsCaller(context, kCreatesNothing, [&] { return Reopen(existing->get(), flags); }, 0,
                      {existing->get()});
}

// Once across crashes (changes_once.h): a create a dead daemon made is opened again instead,
// neither exclusively nor truncating, and the fh that daemon gave it, never answered, is closed.
// One it may not have made (begun, not recorded done) is taken as made only where the name is new
// and the caller's (ChangeKind::kNameAdded); else it is made now, so an exclusive create of a name
// another user made meanwhile fails with EEXIST.
void PassthroughFs::Create(const RequestContext& context, const op::Create& args,
                           CreateReply reply) {
  const base::ErrnoOr<std::shared_ptr<const Inode>> dir_ref =
      ChangeableDirectory(context.nodeid(), args.name);
  if (!dir_ref.ok()) return reply.Error(dir_ref.error().value());
  const Inode& dir = **dir_ref;
  const int flags = BackingFlags(args.flags());
  const std::string name(args.name);
  wire::EntryOut entry;
  wire::OpenOut open;
  const auto create_file = [&](int create_flags) -> ChangeResult {
    base::ErrnoOr<base::UniqueFd> fd =
        CreateOrOpen(context, dir.path.get(), name, create_flags, args.mode(), args.umask());
    if (!fd.ok()) return fd.error();
    if (const base::Errno error = EntryOf(context.nodeid(), args.name, entry, true); !error.ok()) {
      return error;
    }
    open = NewHandle(*std::move(fd), entry.nodeid, create_flags & ~(O_CREAT | O_EXCL),
                     args.flags() & O_DIRECT);
    return open.fh;
  };
  const ChangePlace place{.dir_fd = dir.path.get(), .name = name.c_str(), .maker = context.uid()};
  const ChangeResult result = changes_once_.Make(
      context, name, ChangeKind::kNameAdded, place, [&] { return create_file(flags); },
      [&](const ChangeJournal::Outcome& earlier) {
        ChangeResult opened = create_file(flags & ~(O_EXCL | O_TRUNC));
        // The dead daemon's create was recorded done after its lookup was counted and its file
        // opened: the kernel knows neither, and will never release or forget them.
        if (earlier.done) {
          open_.ReleaseFile(static_cast<uint64_t>(earlier.result));
          if (opened.ok()) inodes_.Forget(entry.nodeid, 1);
        }
        return opened;
      });
  if (!result.ok()) return reply.Error(result.error().value());
  reply.Ok(entry, open);
}

// O_TMPFILE: an inode without a name, registered from its own fd rather than looked up.
void PassthroughFs::Tmpfile(const RequestContext& context, const op::Tmpfile& args,
                            CreateReply reply) {
  if (options_.mount.read_only) return reply.Error(EROFS);
  const base::ErrnoOr<std::shared_ptr<const Inode>> dir_ref = inodes_.Get(context.nodeid());
  if (!dir_ref.ok()) return reply.Error(dir_ref.error().value());
  const Inode& dir = **dir_ref;
  const int flags = BackingFlags(args.flags() & ~(O_CREAT | O_EXCL)) | O_TMPFILE;
  base::ErrnoOr<base::UniqueFd> fd = CallAsCaller(
      context, CreateUmask(args.umask()),
      [&] {
        return OpenMakingRoom([&] {
          return base::FdOfCall(::openat(dir.path.get(), ".", flags | O_CLOEXEC, args.mode()));
        });
      },
      0, {dir.path.get()});
  if (!fd.ok()) return reply.Error(fd.error().value());
  base::ErrnoOr<base::UniqueFd> path =
      base::FdOfCall(::open(ProcPath(fd->get()).c_str(), O_PATH | O_CLOEXEC));
  if (!path.ok()) return reply.Error(path.error().value());
  Found found;
  if (const base::Errno error = inodes_.Adopt(*std::move(path), found); !error.ok()) {
    return reply.Error(error.value());
  }
  const wire::EntryOut entry = EntryFor(found);
  reply.Ok(entry,
           NewHandle(*std::move(fd), entry.nodeid, flags & ~O_TMPFILE, args.flags() & O_DIRECT));
}

// With HANDLE_KILLPRIV_V2 the daemon clears set-ID bits, and nothing tells the kernel: after
// WRITE, FALLOCATE, COPY_FILE_RANGE and an O_TRUNC OPEN it drops only the size and times it
// caches (fs/fuse/file.c: fuse_write_update_attr, fuse_file_fallocate, fuse_truncate_update_attr
// invalidate FUSE_STATX_MODSIZE), so statx(STATX_MODE) would show the old mode, set-ID bits
// included, until the attribute timeout, and so would execve, which asks again only for a mode
// marked stale (fs/fuse/dir.c, fuse_permission). Sent from the handler, before the reply:
// attributes only, for which the kernel takes no lock the waiting request may hold, only the
// inode's spinlock (fs/fuse/inode.c, fuse_reverse_inval_inode with offset < 0). Its answer
// changes nothing here: NotFound says the kernel caches nothing of the node, and the change is
// made and answered either way.
void PassthroughFs::InvalidateAttributes(uint64_t nodeid) const {
  Notifier* notifier = notifier_.load(std::memory_order_acquire);
  if (notifier != nullptr) notifier->InvalInode(nodeid).IgnoreError();
}

void PassthroughFs::Read(const RequestContext&, const op::Read& args, DataReply reply) {
  served_.reads.fetch_add(1, std::memory_order_relaxed);
  const MutableBytes buffer = ThreadBuffer(args.size());
  if (buffer.size() < args.size()) return reply.Error(ENOMEM);
  const std::shared_ptr<FileHandle> file = open_.File(args.fh());
  if (file == nullptr) return reply.Error(EBADF);
  const int fd = file->TransferFd(args.offset(), buffer.size(), buffer.data());
  const base::ErrnoOr<ssize_t> length = base::ValueOfCall(
      ::pread(fd, buffer.data(), buffer.size(), static_cast<off_t>(args.offset())));
  if (!length.ok()) return reply.Error(length.error().value());
  reply.Ok(ConstBytes(buffer.data(), static_cast<size_t>(*length)));
}

// As the caller, like every change of a file's data (or, for the kernel's writeback, as the
// file's owner: ActAsCaller): root's other capabilities (reserved blocks, quotas) are not the
// caller's either. The data is written from where the transport
// put it, which every transport here aligns for O_DIRECT (DevFuseReadBuffer, the uring-cmd
// payload buffers), so nothing is copied or allocated: an embedded server must not allocate on
// the way of the kernel's writeback, since its client's munmap(2) of a FUSE mapping holds the
// mmap lock while it waits for that writeback (a deadlock, seen in the tests).
void PassthroughFs::Write(const RequestContext& context, const op::Write& args, CountReply reply) {
  served_.writes.fetch_add(1, std::memory_order_relaxed);
  if (options_.mount.read_only) return reply.Error(EROFS);
  const std::shared_ptr<FileHandle> file = open_.File(args.fh());
  if (file == nullptr) return reply.Error(EBADF);
  // The kernel's writeback (WRITE_CACHE) goes through whichever handle it picks: it is no
  // O_DIRECT transfer of the client's, and pinning the request's pages for one could take the
  // mmap lock on its way.
  const int fd = args.writeback()
                     ? file->fd()
                     : file->TransferFd(args.offset(), args.data.size(), args.data.data());
  const auto write_bytes = [&]() -> ChangeResult {
    const auto write = [&]() -> ChangeResult {
      const ssize_t written =
          ::pwrite(fd, args.data.data(), args.data.size(), static_cast<off_t>(args.offset()));
      if (written < 0) return base::Errno::Last();
      return static_cast<uint64_t>(written);
    };
    // The writeback names no writer: it is made as the file's owner. It keeps CAP_FSETID: the
    // kernel decided the set-ID bits' fate when the bytes were written to its cache, with the
    // writer's own credentials (file_remove_privs, a SETATTR here), and carrying them out must
    // not decide again (a root writer keeps them).
    return args.writeback()
               ? CallAsOwnerOf(fd, write, kCapabilityFsetid)
               : CallAsCaller(context, kCreatesNothing, write, CallerKeeps(args.kill_suid_gid()));
  };
  // Written again, the bytes would go to the same offset, except where O_APPEND puts them: at
  // the end, once more. So an append is made once across crashes (changes_once.h); it was made
  // when the file has grown by its length since. The test hooks know it by the bytes.
  const std::string_view bytes(reinterpret_cast<const char*>(args.data.data()), args.data.size());
  const SetIdWatch set_id(fd, args.kill_suid_gid());
  const ChangePlace place{.file_fd = fd, .length = args.data.size()};
  const ChangeResult result =
      (file->flags() & O_APPEND) == 0
          ? write_bytes()
          : changes_once_.Make(context, bytes, ChangeKind::kAppended, place, write_bytes);
  if (set_id.Cleared()) InvalidateAttributes(context.nodeid());
  if (!result.ok()) return reply.Error(result.error().value());
  reply.Ok(*result);
}

// A close: the closing owner's POSIX locks on the file go, as close(2) drops them.
void PassthroughFs::Flush(const RequestContext&, const op::Flush& args, EmptyReply reply) {
  const std::shared_ptr<FileHandle> file = open_.File(args.fh());
  if (file == nullptr) return open_.FinishUnknown(args.fh(), reply);
  owner_locks_.Drop(*file, args.lock_owner());
  reply.Ok();
}

void PassthroughFs::Fsync(const RequestContext&, const op::Fsync& args, EmptyReply reply) {
  const std::shared_ptr<FileHandle> file = open_.File(args.fh());
  if (file == nullptr) return SyncUnknown(args.fh(), reply);
  if (const base::Errno error = Sync(file->fd(), args.datasync()); !error.ok()) {
    return reply.Error(error.value());
  }
  reply.Ok();
}

void PassthroughFs::SyncUnknown(uint64_t fh, EmptyReply& reply) {
  if (!open_.DeadDaemons(fh)) return reply.Error(EBADF);
  const base::ErrnoOr<std::shared_ptr<const Inode>> root_ref = inodes_.Get(InodeTable::kRootNodeId);
  if (!root_ref.ok()) return reply.Error(root_ref.error().value());
  const Inode& root = **root_ref;
  // syncfs refuses an O_PATH fd.
  const base::ErrnoOr<base::UniqueFd> readable =
      base::FdOfCall(::openat(root.path.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!readable.ok()) return reply.Error(readable.error().value());
  const base::Errno synced = base::Errno::OfCall(::syncfs(readable->get()));
  if (!synced.ok()) return reply.Error(synced.value());
  reply.Ok();
}

void PassthroughFs::Release(const RequestContext&, const op::Release& args, EmptyReply reply) {
  const std::shared_ptr<FileHandle> handle = open_.ReleaseFile(args.fh());
  if (handle == nullptr) return open_.FinishUnknown(args.fh(), reply);
  owner_locks_.Released(args.fh());
  if (handle->passthrough()) backing_ids_.Release(handle->dev(), handle->ino());
  reply.Ok();
}

// Mode bits (punch hole, keep size, zero range, ...) go to the backing filesystem as given.
// FALLOCATE and COPY_FILE_RANGE carry no KILL_SUIDGID: a non-root caller is taken to lack
// CAP_FSETID, as nearly every one does, so the set-ID bits are watched for every caller.
void PassthroughFs::Fallocate(const RequestContext& context, const op::Fallocate& args,
                              EmptyReply reply) {
  if (options_.mount.read_only) return reply.Error(EROFS);
  const std::shared_ptr<FileHandle> file = open_.File(args.fh());
  if (file == nullptr) return reply.Error(EBADF);
  const int fd = file->fd();
  const SetIdWatch set_id(fd, true);
  const base::Errno error = CallAsCaller(context, kCreatesNothing, [&] {
    return base::Errno::OfCall(::fallocate(fd, args.mode(), static_cast<off_t>(args.offset()),
                                           static_cast<off_t>(args.length())));
  });
  if (set_id.Cleared()) InvalidateAttributes(context.nodeid());
  if (!error.ok()) return reply.Error(error.value());
  reply.Ok();
}

// SEEK_DATA and SEEK_HOLE need the backing file's extents; the fd's own offset is never used
// for I/O (pread/pwrite), so moving it is harmless.
void PassthroughFs::Lseek(const RequestContext&, const op::Lseek& args, LseekReply reply) {
  const std::shared_ptr<FileHandle> file = open_.File(args.fh());
  if (file == nullptr) return reply.Error(EBADF);
  const base::ErrnoOr<off_t> offset =
      base::ValueOfCall(::lseek(file->fd(), static_cast<off_t>(args.offset()), args.whence()));
  if (!offset.ok()) return reply.Error(offset.error().value());
  reply.Ok(static_cast<uint64_t>(*offset));
}

void PassthroughFs::CopyFileRange(const RequestContext& context, const op::CopyFileRange& args,
                                  CountReply reply) {
  if (options_.mount.read_only) return reply.Error(EROFS);
  loff_t in_offset = static_cast<loff_t>(args.offset_in());
  loff_t out_offset = static_cast<loff_t>(args.offset_out());
  const std::shared_ptr<FileHandle> in_file = open_.File(args.fh_in());
  const std::shared_ptr<FileHandle> out_file = open_.File(args.fh_out());
  if (in_file == nullptr || out_file == nullptr) return reply.Error(EBADF);
  const int in = in_file->fd();
  const int out = out_file->fd();
  const SetIdWatch set_id(out, true);
  const base::ErrnoOr<ssize_t> copied = CallAsCaller(context, kCreatesNothing, [&] {
    return base::ValueOfCall(::copy_file_range(in, &in_offset, out, &out_offset, args.length(),
                                               static_cast<unsigned>(args.flags())));
  });
  if (set_id.Cleared()) InvalidateAttributes(args.nodeid_out());
  if (!copied.ok()) return reply.Error(copied.error().value());
  reply.Ok(static_cast<uint64_t>(*copied));
}

}  // namespace ringfuse::daemon
