// PassthroughFs: nodes and their attributes.
#include "daemon/fs/passthrough_fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "daemon/access/credentials.h"
#include "daemon/access/search_permission.h"
#include "daemon/fs/backing.h"

namespace ringfuse::daemon {
namespace {

// One of setattr's two times, as utimensat takes it: given, now, or left alone.
timespec TimeOf(const std::optional<op::SetTime>& time) {
  if (!time) return {0, UTIME_OMIT};
  if (time->now) return {0, UTIME_NOW};
  return {static_cast<time_t>(time->seconds), static_cast<long>(time->nanoseconds)};
}

wire::SxTime SxTimeOf(const statx_timestamp& time) {
  return wire::SxTime{time.tv_sec, time.tv_nsec, 0};
}

wire::Statx StatxOf(const struct statx& in) {
  wire::Statx out{};
  out.mask = in.stx_mask;
  out.blksize = in.stx_blksize;
  out.attributes = in.stx_attributes;
  out.nlink = in.stx_nlink;
  out.uid = in.stx_uid;
  out.gid = in.stx_gid;
  out.mode = in.stx_mode;
  out.ino = in.stx_ino;
  out.size = in.stx_size;
  out.blocks = in.stx_blocks;
  out.attributes_mask = in.stx_attributes_mask;
  out.atime = SxTimeOf(in.stx_atime);
  out.btime = SxTimeOf(in.stx_btime);
  out.ctime = SxTimeOf(in.stx_ctime);
  out.mtime = SxTimeOf(in.stx_mtime);
  out.rdev_major = in.stx_rdev_major;
  out.rdev_minor = in.stx_rdev_minor;
  out.dev_major = in.stx_dev_major;
  out.dev_minor = in.stx_dev_minor;
  return out;
}

// Under writeback_cache the kernel keeps a file's times itself and sends even its own updates
// (at the close after an O_TRUNC open, say, by a caller who may write the file but does not own
// it) as given times, which only the owner may set: where those are refused, both times are set
// to now, the one change a caller who may write is allowed (one time alone needs the owner too;
// so atime moves as well). The cost, without default_permissions only (with it the kernel has
// refused first): such a caller's own utimensat with given times sets them to now instead of
// failing EPERM.
base::Errno SetTimes(int path_fd, const op::Setattr& change, bool kernel_keeps_times) {
  const timespec times[2] = {TimeOf(change.atime()), TimeOf(change.mtime())};
  constexpr int kFlags = AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW;
  const base::Errno error = base::Errno::OfCall(::utimensat(path_fd, "", times, kFlags));
  if (error != base::Errno(EPERM) || !kernel_keeps_times) return error;
  return ::utimensat(path_fd, "", nullptr, kFlags) == 0 ? base::Errno() : error;
}

base::Errno StatOf(int path_fd, struct stat& st) {
  return base::Errno::OfCall(::fstatat(path_fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW));
}

}  // namespace

PassthroughFs::PassthroughFs(base::UniqueFd root, const DaemonOptions& options)
    : inodes_(std::move(root)), options_(options) {}

void PassthroughFs::Init(const Negotiated& negotiated) {
  dont_mask_ = negotiated.Has(wire::init_flag::kDontMask);
  passthrough_agreed_ = negotiated.Has(wire::init_flag::kPassthrough);
}

wire::EntryOut PassthroughFs::EntryFor(const Found& found) const {
  return MakeEntry(found.inode->nodeid, 1, AttrFromStat(found.attr), options_.entry_timeout,
                   options_.attr_timeout);
}

PassthroughFs::Counts PassthroughFs::counts() const {
  return Counts{open_.size(),
                owner_locks_.opens(),
                lock_waiter_.pending(),
                served_.reads.load(std::memory_order_relaxed),
                served_.writes.load(std::memory_order_relaxed),
                served_.listings.load(std::memory_order_relaxed)};
}

// A name under a directory not everyone may search is not to be cached for other users to walk
// unchecked (search_permission.h): with no entry timeout, the kernel asks again at every walk.
base::Errno PassthroughFs::EntryOf(uint64_t parent, std::string_view name, wire::EntryOut& entry,
                                   bool made, std::optional<bool> cacheable) {
  Found found;
  if (const base::Errno error = inodes_.Lookup(parent, name, found, !made); !error.ok()) {
    return error;
  }
  pruner_.PruneIfTooManyPinned();
  entry = EntryFor(found);
  if (!(cacheable.has_value() ? *cacheable : NamesCacheableUnder(parent))) {
    entry.entry_valid = 0;
    entry.entry_valid_nsec = 0;
  }
  return base::Errno();
}

bool PassthroughFs::NamesCacheableUnder(uint64_t dir_node) {
  if (!options_.mount.allow_other) return true;
  const base::ErrnoOr<std::shared_ptr<const Inode>> dir = inodes_.Get(dir_node);
  return dir.ok() && KernelChecksWalksThrough(options_, (*dir)->path.get());
}

// Without default_permissions the kernel has not checked the caller's right to search the parent,
// and with it not an ACL's say (search_permission.h); a missing name is cached only where every
// user would find it missing.
void PassthroughFs::Lookup(const RequestContext& context, const op::Lookup& args,
                           EntryReply reply) {
  const base::ErrnoOr<std::shared_ptr<const Inode>> dir_ref = inodes_.Get(context.nodeid());
  if (!dir_ref.ok()) return reply.Error(dir_ref.error().value());
  const Inode& dir = **dir_ref;
  // Decided once per LOOKUP (a getxattr, with allow_other): where every user's walk is checked
  // as natively, or every user may search, the caller may too.
  const bool cacheable = KernelChecksWalksThrough(options_, dir.path.get());
  const bool checked = options_.mount.allow_other ? cacheable : options_.mount.default_permissions;
  if (!checked) {
    if (const base::Errno error = CallerMaySearch(context, dir.path.get()); !error.ok()) {
      return reply.Error(error.value());
    }
  }
  wire::EntryOut entry;
  if (const base::Errno error = EntryOf(context.nodeid(), args.name, entry, false, cacheable);
      !error.ok()) {
    if (error == base::Errno(ENOENT) &&
        options_.negative_timeout.seconds + options_.negative_timeout.nanoseconds && cacheable) {
      return reply.Ok(MakeNegativeEntry(options_.negative_timeout));
    }
    return reply.Error(error.value());
  }
  reply.Ok(entry);
}

void PassthroughFs::Forget(const RequestContext& context, const op::Forget& args) {
  inodes_.Forget(context.nodeid(), args.nlookup());
}

void PassthroughFs::BatchForget(const RequestContext&, const op::BatchForget& args) {
  for (uint32_t i = 0; i < args.forgets.size(); ++i) {
    const wire::ForgetOne one = args.forgets[i];
    inodes_.Forget(one.nodeid, one.nlookup);
  }
}

void PassthroughFs::Getattr(const RequestContext& context, const op::Getattr& args,
                            AttrReply reply) {
  struct stat st;
  const base::ErrnoOr<std::shared_ptr<const Inode>> inode = inodes_.Get(context.nodeid());
  if (!inode.ok()) {
    // A file open across a crash (ReopenAfterCrash): the node is the dead daemon's, the fh this
    // one's again; fstat names the node alone.
    std::optional<uint64_t> fh = args.fh();
    if (!fh.has_value()) fh = open_.ReopenedFileOf(context.nodeid());
    const std::shared_ptr<FileHandle> file = fh.has_value() ? open_.File(*fh) : nullptr;
    if (file == nullptr) return reply.Error(inode.error().value());
    const base::Errno stat = base::Errno::OfCall(::fstat(file->fd(), &st));
    if (!stat.ok()) return reply.Error(stat.value());
    return reply.Ok(MakeAttrOut(AttrFromStat(st), options_.attr_timeout));
  }
  if (const base::Errno error = StatOf((*inode)->path.get(), st); !error.ok()) {
    return reply.Error(error.value());
  }
  reply.Ok(MakeAttrOut(AttrFromStat(st), options_.attr_timeout));
}

void PassthroughFs::Setattr(const RequestContext& context, const op::Setattr& args,
                            AttrReply reply) {
  if (options_.mount.read_only) return reply.Error(EROFS);
  const base::ErrnoOr<std::shared_ptr<const Inode>> inode_ref = inodes_.Get(context.nodeid());
  if (!inode_ref.ok()) return reply.Error(inode_ref.error().value());
  const Inode& inode = **inode_ref;
  struct stat st;
  if (const base::Errno error = StatOf(inode.path.get(), st); !error.ok()) {
    return reply.Error(error.value());
  }
  // A truncate without FATTR_KILL_SUIDGID comes from a caller with CAP_FSETID (credentials.h).
  const bool keeps_fsetid = args.size().has_value() && !args.kill_suid_gid();
  base::Errno error = CallAsCaller(context, kCreatesNothing,
                                   [&] { return ApplySetattr(inode.path.get(), st, args); },
                                   keeps_fsetid ? kCapabilityFsetid : 0, {inode.path.get()});
  if (error.ok()) error = StatOf(inode.path.get(), st);
  if (!error.ok()) return reply.Error(error.value());
  reply.Ok(MakeAttrOut(AttrFromStat(st), options_.attr_timeout));
}

// Owner first: chown clears set-user-ID, which a mode given in the same request then sets back,
// as one chmod after a chown would. FATTR_KILL_SUIDGID needs nothing more here: the caller's
// truncate, without CAP_FSETID, clears those bits in the backing filesystem itself.
base::Errno PassthroughFs::ApplySetattr(int path_fd, const struct stat& st,
                                        const op::Setattr& change) {
  if (change.uid().has_value() || change.gid().has_value()) {
    const uid_t uid = change.uid().value_or(static_cast<uid_t>(-1));
    const gid_t gid = change.gid().value_or(static_cast<gid_t>(-1));
    if (::fchownat(path_fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
      return base::Errno::Last();
    }
  }
  if (const std::optional<uint32_t> mode = change.mode()) {
    // As lchmod: a symlink has no mode of its own.
    if (S_ISLNK(st.st_mode)) return base::Errno(EOPNOTSUPP);
    if (::chmod(ProcPath(path_fd).c_str(), *mode & 07777) != 0) return base::Errno::Last();
  }
  if (const std::optional<uint64_t> size = change.size()) {
    const std::optional<uint64_t> fh = change.fh();
    const std::shared_ptr<FileHandle> file = fh ? open_.File(*fh) : nullptr;
    if (fh && file == nullptr) return base::Errno(EBADF);
    const off_t length = static_cast<off_t>(*size);
    const int result = file != nullptr ? ::ftruncate(file->fd(), length)
                                       : ::truncate(ProcPath(path_fd).c_str(), length);
    if (result != 0) return base::Errno::Last();
  }
  // Times that come with a size are the truncate's own (no system call sets both: the kernel
  // adds them, as given times under writeback_cache), and the backing truncate sets them
  // itself; setting given times would need the caller to own the file.
  if (!change.size().has_value() && (change.atime().has_value() || change.mtime().has_value())) {
    return SetTimes(path_fd, change, options_.writeback_cache);
  }
  return base::Errno();
}

void PassthroughFs::Statx(const RequestContext& context, const op::Statx& args, StatxReply reply) {
  const base::ErrnoOr<std::shared_ptr<const Inode>> inode_ref = inodes_.Get(context.nodeid());
  if (!inode_ref.ok()) return reply.Error(inode_ref.error().value());
  const Inode& inode = **inode_ref;
  struct statx st;
  const int flags = AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | (args.flags() & AT_STATX_SYNC_TYPE);
  const base::Errno stat =
      base::Errno::OfCall(::statx(inode.path.get(), "", flags, args.mask(), &st));
  if (!stat.ok()) return reply.Error(stat.value());
  wire::StatxOut out{};
  out.attr_valid = options_.attr_timeout.seconds;
  out.attr_valid_nsec = options_.attr_timeout.nanoseconds;
  out.stat = StatxOf(st);
  reply.Ok(out);
}

// Sent only without default_permissions; AT_EACCESS makes the check use the fsuid set for the
// caller rather than the daemon's real uid.
void PassthroughFs::Access(const RequestContext& context, const op::Access& args,
                           EmptyReply reply) {
  const base::ErrnoOr<std::shared_ptr<const Inode>> inode_ref = inodes_.Get(context.nodeid());
  if (!inode_ref.ok()) return reply.Error(inode_ref.error().value());
  const Inode& inode = **inode_ref;
  if (options_.mount.read_only && (args.mask() & W_OK)) return reply.Error(EROFS);
  const base::Errno error = CallAsCaller(
      context, kCreatesNothing,
      [&] {
        return base::Errno::OfCall(::faccessat(inode.path.get(), "", args.mask(),
                                               AT_EMPTY_PATH | AT_EACCESS | AT_SYMLINK_NOFOLLOW));
      },
      0, {inode.path.get()});
  if (!error.ok()) return reply.Error(error.value());
  reply.Ok();
}

void PassthroughFs::Readlink(const RequestContext& context, const op::Readlink&, DataReply reply) {
  const base::ErrnoOr<std::shared_ptr<const Inode>> inode_ref = inodes_.Get(context.nodeid());
  if (!inode_ref.ok()) return reply.Error(inode_ref.error().value());
  const Inode& inode = **inode_ref;
  char target[wire::kSymlinkTargetMax + 1];
  const base::ErrnoOr<ssize_t> length =
      base::ValueOfCall(::readlinkat(inode.path.get(), "", target, sizeof(target)));
  if (!length.ok()) return reply.Error(length.error().value());
  reply.Ok(ConstBytes(reinterpret_cast<const std::byte*>(target), static_cast<size_t>(*length)));
}

void PassthroughFs::Statfs(const RequestContext& context, const op::Statfs&, StatfsReply reply) {
  const base::ErrnoOr<std::shared_ptr<const Inode>> inode_ref = inodes_.Get(context.nodeid());
  if (!inode_ref.ok()) return reply.Error(inode_ref.error().value());
  const Inode& inode = **inode_ref;
  struct statvfs st;
  const base::Errno stat = base::Errno::OfCall(::fstatvfs(inode.path.get(), &st));
  if (!stat.ok()) return reply.Error(stat.value());
  wire::Kstatfs out{};
  out.blocks = st.f_blocks;
  out.bfree = st.f_bfree;
  out.bavail = st.f_bavail;
  out.files = st.f_files;
  out.ffree = st.f_ffree;
  out.bsize = static_cast<uint32_t>(st.f_bsize);
  out.namelen = static_cast<uint32_t>(st.f_namemax);
  out.frsize = static_cast<uint32_t>(st.f_frsize);
  reply.Ok(out);
}

}  // namespace ringfuse::daemon
