/// \file
/// Requests from the kernel: validated header plus a typed view of every argument, as a Handler
/// receives them, and what was wrong with a message the parser refused (ParseError, which a
/// RequestObserver sees). The parser itself is ringfuse/protocol/parse.h. Views point into the
/// buffer the request was read into and live as long as the request is being handled.
///
/// Every op struct has one shape: `in`, the raw fixed struct where the opcode has one, read
/// through an accessor per value (`flags()`, `fh()`, `offset()`; an optional where the kernel
/// marks the value valid); then, as fields, the parts that follow it (names, data, records) as
/// views, and what only the opcode says (`Setlk::wait`, `CopyFileRange::wide_reply`).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "absl/status/status.h"
#include "ringfuse/bytes.h"
#include "ringfuse/export.h"
#include "ringfuse/opcode.h"
#include "ringfuse/wire.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// A run of fixed-size records in kernel memory order, read by copy (no alignment assumed).
template <typename T>
class RecordArray {
 public:
  RecordArray() = default;  ///< no records
  /// `count` records of sizeof(T) bytes from the start of `bytes`, which holds them all.
  RecordArray(ConstBytes bytes, uint32_t count) : bytes_(bytes), count_(count) {}

  uint32_t size() const { return count_; }    ///< how many records
  bool empty() const { return count_ == 0; }  ///< no records
  /// Record `i`, copied out; `i` must be below size().
  T operator[](uint32_t i) const {
    T value;
    std::memcpy(&value, bytes_.data() + size_t{i} * sizeof(T), sizeof(T));
    return value;
  }

 private:
  ConstBytes bytes_;
  uint32_t count_ = 0;
};

/// One struct per operation. Where two opcodes differ only in their wire form, one struct serves
/// both (RENAME and RENAME2, SETLK and SETLKW, COPY_FILE_RANGE and COPY_FILE_RANGE_64).
///
/// Each struct keeps the request's fixed argument struct as the kernel sent it (`in`, for
/// protocol work) and names what a filesystem needs of it with accessors; a field the kernel marks
/// valid with a flag comes as an optional. Flags and modes that the C library takes as int (open
/// flags, access masks, fallocate modes, lseek's whence) come as int.
namespace op {

namespace detail {
/// `value` when `bit` is set in `flags`, else nothing.
template <typename T, typename Flags>
constexpr std::optional<T> IfSet(Flags flags, Flags bit, T value) {
  if ((flags & bit) == 0) return std::nullopt;
  return value;
}
}  // namespace detail

/// LOOKUP: a name in directory `context.nodeid()`.
struct Lookup {
  std::string_view name;  ///< the name to find
};
/// FORGET: the kernel drops lookups of node `context.nodeid()`.
struct Forget {
  wire::ForgetIn in;  ///< the raw request
  /// How many lookups (entries answered by LOOKUP, CREATE, READDIRPLUS...) the kernel forgets.
  uint64_t nlookup() const { return in.nlookup; }
};
/// GETATTR: the attributes of node `context.nodeid()`.
struct Getattr {
  wire::GetattrIn in;  ///< the raw request
  /// The open file the request comes through (fstat), when the kernel names one
  /// (FUSE_GETATTR_FH).
  std::optional<uint64_t> fh() const {
    return detail::IfSet(in.getattr_flags, wire::kGetattrFh, in.fh);
  }
};
/// A time SETATTR sets: the one given, or the server's current time (touch, utimensat UTIME_NOW).
struct SetTime {
  bool now = false;          ///< set the server's current time; the other fields are unused
  uint64_t seconds = 0;      ///< since the epoch
  uint32_t nanoseconds = 0;  ///< within the second
};

/// SETATTR: attribute changes to node `context.nodeid()`. Each accessor answers nothing when the
/// kernel does not ask to change that attribute (its bit in in.valid is clear).
struct Setattr {
  wire::SetattrIn in;  ///< the raw request

  /// The new mode (chmod): the file type bits come too; the permissions are its low 07777.
  std::optional<uint32_t> mode() const { return Field(wire::kFattrMode, in.mode); }
  /// The new owner (chown).
  std::optional<uint32_t> uid() const { return Field(wire::kFattrUid, in.uid); }
  /// The new group (chown).
  std::optional<uint32_t> gid() const { return Field(wire::kFattrGid, in.gid); }
  /// The new size (truncate).
  std::optional<uint64_t> size() const { return Field(wire::kFattrSize, in.size); }
  /// The open file the change comes through (ftruncate, fchmod...).
  std::optional<uint64_t> fh() const { return Field(wire::kFattrFh, in.fh); }
  /// The caller's lock owner, with a truncate.
  std::optional<uint64_t> lock_owner() const { return Field(wire::kFattrLockOwner, in.lock_owner); }
  /// The new access time.
  std::optional<SetTime> atime() const {
    return Time(wire::kFattrAtime, wire::kFattrAtimeNow, in.atime, in.atimensec);
  }
  /// The new modification time.
  std::optional<SetTime> mtime() const {
    return Time(wire::kFattrMtime, wire::kFattrMtimeNow, in.mtime, in.mtimensec);
  }
  /// The new change time.
  std::optional<SetTime> ctime() const {
    return Time(wire::kFattrCtime, 0, in.ctime, in.ctimensec);
  }
  /// Clear setuid and setgid (HANDLE_KILLPRIV_V2): the kernel asks it for a chown of a
  /// non-directory, and for a truncate by a caller without CAP_FSETID.
  bool kill_suid_gid() const { return (in.valid & wire::kFattrKillSuidGid) != 0; }

 private:
  template <typename T>
  std::optional<T> Field(uint32_t bit, T value) const {
    return detail::IfSet(in.valid, bit, value);
  }
  std::optional<SetTime> Time(uint32_t bit, uint32_t now_bit, uint64_t seconds,
                              uint32_t nanoseconds) const {
    if ((in.valid & now_bit) != 0) return SetTime{.now = true};
    if ((in.valid & bit) == 0) return std::nullopt;
    return SetTime{.now = false, .seconds = seconds, .nanoseconds = nanoseconds};
  }
};
/// READLINK: the target of symlink `context.nodeid()`.
struct Readlink {};
/// SYMLINK: a new symlink in directory `context.nodeid()`.
struct Symlink {
  std::string_view name;    ///< the new entry
  std::string_view target;  ///< what it points to
};
/// MKNOD: a new device, FIFO, socket or regular file in directory `context.nodeid()`.
struct Mknod {
  wire::MknodIn in;       ///< the raw request
  std::string_view name;  ///< the new entry

  /// The file type and permission bits; the kernel has applied umask() unless kDontMask was
  /// negotiated.
  uint32_t mode() const { return in.mode; }
  /// The device number, for a block or character device.
  uint32_t rdev() const { return in.rdev; }
  /// The caller's umask.
  uint32_t umask() const { return in.umask; }
};
/// MKDIR: a new directory in directory `context.nodeid()`.
struct Mkdir {
  wire::MkdirIn in;       ///< the raw request
  std::string_view name;  ///< the new entry

  /// The permission bits (no S_IFDIR); the kernel has applied umask() unless kDontMask was
  /// negotiated.
  uint32_t mode() const { return in.mode; }
  /// The caller's umask.
  uint32_t umask() const { return in.umask; }
};
/// UNLINK: removes a non-directory from directory `context.nodeid()`.
struct Unlink {
  std::string_view name;  ///< the entry to remove
};
/// RMDIR: removes an empty directory from directory `context.nodeid()`.
struct Rmdir {
  std::string_view name;  ///< the entry to remove
};
/// RENAME and RENAME2: moves an entry of directory `context.nodeid()`.
struct Rename {
  wire::Rename2In in;         ///< the raw request; RENAME's (which has no flags) with flags 0
  std::string_view old_name;  ///< the entry in `context.nodeid()`
  std::string_view new_name;  ///< its name in newdir()

  /// The directory it moves to.
  uint64_t newdir() const { return in.newdir; }
  /// RENAME_NOREPLACE, RENAME_EXCHANGE, RENAME_WHITEOUT; 0 for RENAME.
  uint32_t flags() const { return in.flags; }
};
/// LINK: a new hard link in directory `context.nodeid()`.
struct Link {
  wire::LinkIn in;            ///< the raw request
  std::string_view new_name;  ///< the new entry

  /// The node the new entry names.
  uint64_t oldnodeid() const { return in.oldnodeid; }
};
/// OPEN: opens file `context.nodeid()`.
struct Open {
  wire::OpenIn in;  ///< the raw request

  /// The open(2) flags, without O_CREAT, O_EXCL and O_NOCTTY (the kernel's), and without O_TRUNC
  /// unless kAtomicOTrunc was negotiated.
  int flags() const { return static_cast<int>(in.flags); }
  /// A truncating open by a caller without CAP_FSETID: clear setuid and setgid
  /// (FUSE_OPEN_KILL_SUIDGID, HANDLE_KILLPRIV_V2).
  bool kill_suid_gid() const { return (in.open_flags & wire::kOpenKillSuidGid) != 0; }
};
/// READ: data of an open file.
struct Read {
  wire::ReadIn in;  ///< the raw request

  uint64_t fh() const { return in.fh; }          ///< the open file, as OPEN answered it
  uint64_t offset() const { return in.offset; }  ///< where to read from
  /// The most bytes to answer; no more than the connection allows (the connection's
  /// Negotiated::MaxPayload).
  uint32_t size() const { return in.size; }
  /// The open flags of the file (O_APPEND, O_DIRECT...).
  int flags() const { return static_cast<int>(in.flags); }
  /// The caller's lock owner, when the kernel sends it (FUSE_READ_LOCKOWNER).
  std::optional<uint64_t> lock_owner() const {
    return detail::IfSet(in.read_flags, wire::kReadLockOwner, in.lock_owner);
  }
};
/// WRITE: data for an open file.
struct Write {
  wire::WriteIn in;  ///< the raw request
  ConstBytes data;   ///< what to write

  uint64_t fh() const { return in.fh; }          ///< the open file, as OPEN answered it
  uint64_t offset() const { return in.offset; }  ///< where to write to
  /// The open flags of the file (O_APPEND, O_DIRECT...).
  int flags() const { return static_cast<int>(in.flags); }
  /// The kernel writing back its page cache (FUSE_WRITE_CACHE, with the writeback cache or a
  /// shared mapping) rather than a client's write(2): fh() is any handle of the file open for
  /// writing, and there is no lock owner.
  bool writeback() const { return (in.write_flags & wire::kWriteCache) != 0; }
  /// The caller's lock owner, when the kernel sends it (FUSE_WRITE_LOCKOWNER).
  std::optional<uint64_t> lock_owner() const {
    return detail::IfSet(in.write_flags, wire::kWriteLockOwner, in.lock_owner);
  }
  /// A write by a caller without CAP_FSETID: clear setuid and setgid (FUSE_WRITE_KILL_SUIDGID,
  /// HANDLE_KILLPRIV_V2).
  bool kill_suid_gid() const { return (in.write_flags & wire::kWriteKillSuidGid) != 0; }
};
/// STATFS: statistics of the filesystem.
struct Statfs {};
/// RELEASE: the last close of an open file.
struct Release {
  wire::ReleaseIn in;  ///< the raw request

  /// The open file, as OPEN answered it; free to reuse after the reply.
  uint64_t fh() const { return in.fh; }
  /// The open flags of the file.
  int flags() const { return static_cast<int>(in.flags); }
  /// The release stands for a FLUSH too (FUSE_RELEASE_FLUSH).
  bool flush() const { return (in.release_flags & wire::kReleaseFlush) != 0; }
  /// The owner whose flock(2) locks on the file go with it, when it holds any
  /// (FUSE_RELEASE_FLOCK_UNLOCK).
  std::optional<uint64_t> lock_owner() const {
    return detail::IfSet(in.release_flags, wire::kReleaseFlockUnlock, in.lock_owner);
  }
};
/// FSYNC: an open file to stable storage.
struct Fsync {
  wire::FsyncIn in;  ///< the raw request

  uint64_t fh() const { return in.fh; }  ///< the open file, as OPEN answered it
  /// Only the data and what reading it needs, as fdatasync(2) (FUSE_FSYNC_FDATASYNC).
  bool datasync() const { return (in.fsync_flags & wire::kFsyncFdatasync) != 0; }
};
/// SETXATTR: sets an extended attribute of node `context.nodeid()`.
struct Setxattr {
  wire::SetxattrIn in;    ///< the raw request (with no SETXATTR_EXT, setxattr_flags is 0)
  std::string_view name;  ///< the attribute
  ConstBytes value;       ///< its new value

  /// XATTR_CREATE or XATTR_REPLACE, as setxattr(2).
  int flags() const { return static_cast<int>(in.flags); }
  /// Setting a POSIX ACL by a caller outside the file's group without CAP_FSETID: clear setgid
  /// (FUSE_SETXATTR_ACL_KILL_SGID).
  bool acl_kill_sgid() const { return (in.setxattr_flags & wire::kSetxattrAclKillSgid) != 0; }
};
/// GETXATTR: an extended attribute of node `context.nodeid()`.
struct Getxattr {
  wire::GetxattrIn in;    ///< the raw request
  std::string_view name;  ///< the attribute

  /// The largest value the caller takes; 0 asks for the value's size only.
  uint32_t size() const { return in.size; }
};
/// LISTXATTR: the extended attribute names of node `context.nodeid()`.
struct Listxattr {
  wire::GetxattrIn in;  ///< the raw request

  /// The largest list the caller takes; 0 asks for the list's size only.
  uint32_t size() const { return in.size; }
};
/// REMOVEXATTR: removes an extended attribute of node `context.nodeid()`.
struct Removexattr {
  std::string_view name;  ///< the attribute
};
/// FLUSH: a close(2) of a descriptor of an open file.
struct Flush {
  wire::FlushIn in;  ///< the raw request

  uint64_t fh() const { return in.fh; }  ///< the open file, as OPEN answered it
  /// The owner closing: its POSIX locks on the file go.
  uint64_t lock_owner() const { return in.lock_owner; }
};
/// INIT: the kernel's offer, which the session negotiates (Negotiate); a Handler sees the result
/// (Handler::Init).
struct Init {
  wire::InitIn in;  ///< the raw request
};
/// OPENDIR: opens directory `context.nodeid()`.
struct Opendir {
  wire::OpenIn in;  ///< the raw request

  /// The open(2) flags (O_DIRECTORY, O_RDONLY...).
  int flags() const { return static_cast<int>(in.flags); }
};
/// READDIR: entries of an open directory.
struct Readdir {
  wire::ReadIn in;  ///< the raw request

  uint64_t fh() const { return in.fh; }  ///< the open directory, as OPENDIR answered it
  /// Where to go on from: 0 at the start, else the offset of the last entry the kernel took.
  uint64_t offset() const { return in.offset; }
  /// The most bytes of entries to answer.
  uint32_t size() const { return in.size; }
};
/// RELEASEDIR: the last close of an open directory.
struct Releasedir {
  wire::ReleaseIn in;  ///< the raw request

  /// The open directory, as OPENDIR answered it; free to reuse after the reply.
  uint64_t fh() const { return in.fh; }
  /// The open flags of the directory.
  int flags() const { return static_cast<int>(in.flags); }
};
/// FSYNCDIR: an open directory to stable storage.
struct Fsyncdir {
  wire::FsyncIn in;  ///< the raw request

  uint64_t fh() const { return in.fh; }  ///< the open directory, as OPENDIR answered it
  /// Only the data and what reading it needs, as fdatasync(2) (FUSE_FSYNC_FDATASYNC).
  bool datasync() const { return (in.fsync_flags & wire::kFsyncFdatasync) != 0; }
};
/// GETLK: tests for a POSIX lock on an open file.
struct Getlk {
  wire::LkIn in;  ///< the raw request

  uint64_t fh() const { return in.fh; }  ///< the open file, as OPEN answered it
  /// The owner that would take the lock.
  uint64_t lock_owner() const { return in.owner; }
  /// The lock to test: its range (start to end, inclusive), F_RDLCK or F_WRLCK, and pid.
  const wire::FileLock& lock() const { return in.lk; }
};
/// SETLK and SETLKW: takes or releases a lock on an open file.
struct Setlk {
  wire::LkIn in;  ///< the raw request
  bool wait;      ///< SETLKW: block until the lock is granted

  uint64_t fh() const { return in.fh; }  ///< the open file, as OPEN answered it
  /// The owner that takes or releases the lock.
  uint64_t lock_owner() const { return in.owner; }
  /// The lock: its range (start to end, inclusive), F_RDLCK, F_WRLCK or F_UNLCK, and pid.
  const wire::FileLock& lock() const { return in.lk; }
  /// A flock(2) lock on the whole file rather than a POSIX lock (FUSE_LK_FLOCK).
  bool flock() const { return (in.lk_flags & wire::kLkFlock) != 0; }
};
/// ACCESS: access(2) to node `context.nodeid()`, sent only without default_permissions.
struct Access {
  wire::AccessIn in;  ///< the raw request

  /// R_OK, W_OK and X_OK, or F_OK, as access(2).
  int mask() const { return static_cast<int>(in.mask); }
};
/// CREATE: creates and opens a regular file in directory `context.nodeid()`.
struct Create {
  wire::CreateIn in;      ///< the raw request
  std::string_view name;  ///< the new entry

  /// The open(2) flags (O_CREAT, O_EXCL...), without O_NOCTTY.
  int flags() const { return static_cast<int>(in.flags); }
  /// The file type and permission bits; the kernel has applied umask() unless kDontMask was
  /// negotiated.
  uint32_t mode() const { return in.mode; }
  /// The caller's umask.
  uint32_t umask() const { return in.umask; }
  /// Opening an existing file with O_TRUNC, by a caller without CAP_FSETID: clear setuid and
  /// setgid (FUSE_OPEN_KILL_SUIDGID, HANDLE_KILLPRIV_V2).
  bool kill_suid_gid() const { return (in.open_flags & wire::kOpenKillSuidGid) != 0; }
};
/// INTERRUPT: the kernel gives up waiting for a request.
struct Interrupt {
  wire::InterruptIn in;  ///< the raw request

  /// The unique of the request to interrupt.
  uint64_t unique() const { return in.unique; }
};
/// BMAP: maps a block of file `context.nodeid()` to a device block (fuseblk).
struct Bmap {
  wire::BmapIn in;  ///< the raw request

  uint64_t block() const { return in.block; }          ///< in blocksize() units
  uint32_t blocksize() const { return in.blocksize; }  ///< in bytes
};
/// DESTROY: the kernel is unmounting.
struct Destroy {};
/// IOCTL: an ioctl(2) on an open file.
struct Ioctl {
  wire::IoctlIn in;    ///< the raw request
  ConstBytes in_data;  ///< what the caller passes in (in.in_size bytes)

  uint64_t fh() const { return in.fh; }    ///< the open file, as OPEN answered it
  uint32_t cmd() const { return in.cmd; }  ///< the ioctl request
  /// The ioctl's argument: for most commands a pointer in the caller's memory.
  uint64_t arg() const { return in.arg; }
  /// FUSE_IOCTL_* (wire::kIoctlCompat, kIoctlUnrestricted, kIoctl32Bit, kIoctlDir...).
  uint32_t flags() const { return in.flags; }
  /// The most bytes of output the caller takes.
  uint32_t out_size() const { return in.out_size; }
};
/// POLL: which events are ready on an open file.
struct Poll {
  wire::PollIn in;  ///< the raw request

  uint64_t fh() const { return in.fh; }  ///< the open file, as OPEN answered it
  /// The poll(2) events the caller waits for (POLLIN, POLLOUT...).
  uint32_t events() const { return in.events; }
  /// The handle to give Notifier::Poll once an event is ready, when the caller will wait for
  /// one (FUSE_POLL_SCHEDULE_NOTIFY).
  std::optional<uint64_t> kernel_handle() const {
    return detail::IfSet(in.flags, wire::kPollScheduleNotify, in.kh);
  }
};
/// NOTIFY_REPLY: the kernel's answer to a RETRIEVE notification.
struct NotifyReply {
  wire::NotifyRetrieveIn in;  ///< the raw request
  ConstBytes data;            ///< the retrieved cache contents

  /// Where in the file data starts.
  uint64_t offset() const { return in.offset; }
};
/// BATCH_FORGET: FORGET for many nodes at once.
struct BatchForget {
  RecordArray<wire::ForgetOne> forgets;  ///< node ids, and how many lookups of each to forget
};
/// FALLOCATE: allocates or punches a range of an open file.
struct Fallocate {
  wire::FallocateIn in;  ///< the raw request

  uint64_t fh() const { return in.fh; }          ///< the open file, as OPEN answered it
  uint64_t offset() const { return in.offset; }  ///< where the range starts
  uint64_t length() const { return in.length; }  ///< how long the range is
  /// fallocate(2)'s mode: 0 to allocate, or FALLOC_FL_* (KEEP_SIZE, PUNCH_HOLE, ZERO_RANGE...).
  int mode() const { return static_cast<int>(in.mode); }
};
/// READDIRPLUS: entries of an open directory, each with its lookup.
struct Readdirplus {
  wire::ReadIn in;  ///< the raw request

  uint64_t fh() const { return in.fh; }  ///< the open directory, as OPENDIR answered it
  /// Where to go on from: 0 at the start, else the offset of the last entry the kernel took.
  uint64_t offset() const { return in.offset; }
  /// The most bytes of entries to answer.
  uint32_t size() const { return in.size; }
};
/// LSEEK: SEEK_DATA or SEEK_HOLE in an open file (the kernel answers the other lseeks itself).
struct Lseek {
  wire::LseekIn in;  ///< the raw request

  uint64_t fh() const { return in.fh; }          ///< the open file, as OPEN answered it
  uint64_t offset() const { return in.offset; }  ///< where to look from
  int whence() const { return static_cast<int>(in.whence); }  ///< SEEK_DATA or SEEK_HOLE
};
/// COPY_FILE_RANGE and COPY_FILE_RANGE_64: copies from open file `context.nodeid()` to another.
struct CopyFileRange {
  wire::CopyFileRangeIn in;  ///< the raw request
  bool wide_reply;           ///< COPY_FILE_RANGE_64: the reply counts in 64 bits

  uint64_t fh_in() const { return in.fh_in; }            ///< the file copied from
  uint64_t offset_in() const { return in.off_in; }       ///< where in it
  uint64_t nodeid_out() const { return in.nodeid_out; }  ///< the node copied to
  uint64_t fh_out() const { return in.fh_out; }          ///< the file copied to
  uint64_t offset_out() const { return in.off_out; }     ///< where in it
  uint64_t length() const { return in.len; }             ///< how many bytes at most
  uint64_t flags() const { return in.flags; }            ///< copy_file_range(2)'s flags (0 so far)
};
/// SETUPMAPPING: DAX, maps a range of an open file into the DAX window (virtiofs).
struct SetupMapping {
  wire::SetupMappingIn in;  ///< the raw request

  uint64_t fh() const { return in.fh; }                  ///< the open file, as OPEN answered it
  uint64_t file_offset() const { return in.foffset; }    ///< where the range starts in the file
  uint64_t length() const { return in.len; }             ///< how long the range is
  uint64_t window_offset() const { return in.moffset; }  ///< where it goes in the DAX window
  /// wire::kSetupMappingFlagRead and kSetupMappingFlagWrite: the access the mapping allows.
  uint64_t flags() const { return in.flags; }
};
/// REMOVEMAPPING: DAX, removes mappings from the DAX window (virtiofs).
struct RemoveMapping {
  RecordArray<wire::RemoveMappingOne> mappings;  ///< the window ranges to unmap
};
/// SYNCFS: the whole filesystem to stable storage (syncfs(2)); carries nothing.
struct Syncfs {
  wire::SyncfsIn in;  ///< the raw request
};
/// TMPFILE: creates and opens an unnamed regular file in directory `context.nodeid()` (O_TMPFILE).
struct Tmpfile {
  wire::CreateIn in;      ///< the raw request
  std::string_view name;  ///< what the kernel names the nameless file ("/")

  /// The open(2) flags (O_TMPFILE, O_RDWR...).
  int flags() const { return static_cast<int>(in.flags); }
  /// The file type and permission bits; the kernel has applied umask() unless kDontMask was
  /// negotiated.
  uint32_t mode() const { return in.mode; }
  /// The caller's umask.
  uint32_t umask() const { return in.umask; }
};
/// STATX: statx(2) of node `context.nodeid()`.
struct Statx {
  wire::StatxIn in;  ///< the raw request

  /// The open file the request comes through, when the kernel names one (FUSE_GETATTR_FH).
  std::optional<uint64_t> fh() const {
    return detail::IfSet(in.getattr_flags, wire::kGetattrFh, in.fh);
  }
  /// statx(2)'s flags: AT_STATX_FORCE_SYNC, AT_STATX_DONT_SYNC...
  int flags() const { return static_cast<int>(in.sx_flags); }
  /// The STATX_* fields the caller asks for.
  uint32_t mask() const { return in.sx_mask; }
};
}  // namespace op

namespace detail {
/// `Variant` with each of `Rest` appended that it does not hold yet, in order.
template <typename Variant, typename... Rest>
struct WithNewAlternatives {
  using type = Variant;
};
template <typename... Kept, typename Next, typename... Rest>
struct WithNewAlternatives<std::variant<Kept...>, Next, Rest...>
    : WithNewAlternatives<std::conditional_t<(std::is_same_v<Kept, Next> || ...),
                                             std::variant<Kept...>, std::variant<Kept..., Next>>,
                          Rest...> {};
}  // namespace detail

/// One alternative per op struct, in opcode order, from RINGFUSE_FOR_EACH_OPCODE; opcodes that
/// share a struct share its alternative.
using RequestArgs = detail::WithNewAlternatives<std::variant<>
#define RINGFUSE_ARGS(name, number, kernel_name, op_struct, ...) , op::op_struct
                                                    RINGFUSE_FOR_EACH_OPCODE(RINGFUSE_ARGS)
#undef RINGFUSE_ARGS
                                                >::type;

/// Request extensions (7.38): what the kernel appended after the arguments.
struct Extensions {
  ConstBytes raw;                     ///< every extension, headers included
  RecordArray<uint32_t> supp_groups;  ///< FUSE_EXT_GROUPS, empty when absent
  ConstBytes security_context;        ///< the security-context extension, empty when absent
};

/// A parsed request.
struct Request {
  wire::InHeader header;  ///< as the kernel sent it
  Opcode opcode;          ///< header.opcode, known to be one of ours
  RequestArgs args;       ///< the arguments, op::* for opcode
  Extensions extensions;  ///< what followed the arguments
};

/// What was wrong with a message ParseRequest refused.
enum class ParseErrorKind {
  kShortHeader,        ///< fewer bytes than a fuse_in_header
  kLengthMismatch,     ///< header.len disagrees with the bytes received
  kUnknownOpcode,      ///< no such opcode in protocol 7.45
  kTruncatedArgument,  ///< an argument runs past the end of the message
  kNameWithoutNul,     ///< a name is not NUL-terminated inside the message
  kNameTooLong,        ///< a name is longer than the kernel itself allows
  kBadExtension,       ///< the request extensions are malformed
  kSizeTooLarge,       ///< a requested reply size beyond what the connection allows
};

/// A short phrase for `kind` ("short header", "name too long"...).
std::string_view ParseErrorKindName(ParseErrorKind kind);

/// Why a message could not be parsed, and the unique to answer it with when it could be read.
struct ParseError {
  ParseErrorKind kind;             ///< what was wrong
  uint32_t opcode = 0;             ///< 0 when the header could not be read
  std::optional<uint64_t> unique;  ///< set when the header could be read
  std::string_view argument;       ///< which argument, where one is to blame

  std::string ToString() const;   ///< one line: kind, opcode, unique, argument
  absl::Status ToStatus() const;  ///< ToString() as an InvalidArgument status
};

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
