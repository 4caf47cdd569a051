/// \file
/// The FUSE kernel ABI (the wire format), protocol 7.45 (Linux 6.18), defined by ringfuse itself.
///
/// Debian 12's <linux/fuse.h> stops at 7.38, so the project owns these definitions. Every struct is
/// plain data in the kernel's layout; sizes and field offsets are pinned by static_asserts below
/// and cross-checked against the system header by tests/protocol/abi_matches_system_header_test.cc.
/// Names are CamelCase so that this header can be included next to <linux/fuse.h>, whose macros and
/// enumerators would otherwise collide; fields keep the kernel's names.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ringfuse/export.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse::wire {

/// the protocol's major version, which every kernel speaks
inline constexpr uint32_t kKernelMajor = 7;
inline constexpr uint32_t kKernelMinor = 45;  ///< the newest protocol minor ringfuse knows
/// The oldest kernel protocol ringfuse accepts (Linux 5.10 speaks 7.32; 7.31 adds nothing we need).
inline constexpr uint32_t kOldestSupportedMinor = 31;
inline constexpr uint64_t kRootId = 1;  ///< the root directory's node id
/// the smallest buffer the kernel accepts for a read of /dev/fuse
inline constexpr size_t kMinReadBuffer = 8192;
/// set in the unique of a request the kernel sends again (NOTIFY_RESEND)
inline constexpr uint64_t kUniqueResend = uint64_t{1} << 63;
/// INTERRUPT requests carry the interrupted request's unique with this bit set.
inline constexpr uint64_t kInterruptUniqueBit = 1;
/// the uid or gid of a request whose caller's id does not map into the mount
inline constexpr uint32_t kInvalidUidGid = 0xffffffffu;

/// \name The kernel's limits on names
/// The kernel's own limits on names (fs/fuse/fuse_i.h FUSE_NAME_MAX, PATH_MAX, XATTR_NAME_MAX).
//@{
inline constexpr size_t kNameMax = 1024;  ///< longest name in bytes (FUSE_NAME_MAX)
/// longest symlink target in bytes (PATH_MAX less its NUL)
inline constexpr size_t kSymlinkTargetMax = 4095;
/// longest extended attribute name in bytes (XATTR_NAME_MAX)
inline constexpr size_t kXattrNameMax = 255;
//@}
/// The VFS caps getxattr and listxattr buffers at XATTR_SIZE_MAX and XATTR_LIST_MAX (both 64 KiB),
/// so the kernel never asks a FUSE server for more.
inline constexpr uint32_t kXattrSizeMax = 65536;
/// The most any connection can negotiate: max_pages is 16 bits, pages at most 64 KiB.
inline constexpr uint32_t kMaxReplyAnyConnection = 0xffffu * 65536u;

/// fuse_attr: a node's attributes.
struct Attr {
  uint64_t ino;        ///< inode number
  uint64_t size;       ///< size in bytes
  uint64_t blocks;     ///< 512-byte blocks allocated
  uint64_t atime;      ///< last access, seconds
  uint64_t mtime;      ///< last modification, seconds
  uint64_t ctime;      ///< last status change, seconds
  uint32_t atimensec;  ///< nanoseconds of atime
  uint32_t mtimensec;  ///< nanoseconds of mtime
  uint32_t ctimensec;  ///< nanoseconds of ctime
  uint32_t mode;       ///< file type and permissions
  uint32_t nlink;      ///< hard links
  uint32_t uid;        ///< owner
  uint32_t gid;        ///< group
  uint32_t rdev;       ///< device number, for device files
  uint32_t blksize;    ///< preferred I/O block size
  uint32_t flags;      ///< kAttr*
};

/// fuse_sx_time: a statx timestamp.
struct SxTime {
  int64_t tv_sec;    ///< seconds
  uint32_t tv_nsec;  ///< nanoseconds
  int32_t reserved;  ///< unused
};

/// fuse_statx: struct statx as FUSE carries it.
struct Statx {
  uint32_t mask;             ///< which fields are filled (STATX_*)
  uint32_t blksize;          ///< preferred I/O block size
  uint64_t attributes;       ///< STATX_ATTR_* flags
  uint32_t nlink;            ///< hard links
  uint32_t uid;              ///< owner
  uint32_t gid;              ///< group
  uint16_t mode;             ///< file type and permissions
  uint16_t spare0[1];        ///< unused
  uint64_t ino;              ///< inode number
  uint64_t size;             ///< size in bytes
  uint64_t blocks;           ///< 512-byte blocks allocated
  uint64_t attributes_mask;  ///< which attributes bits are supported
  SxTime atime;              ///< last access
  SxTime btime;              ///< creation
  SxTime ctime;              ///< last status change
  SxTime mtime;              ///< last modification
  uint32_t rdev_major;       ///< device number's major, for device files
  uint32_t rdev_minor;       ///< device number's minor
  uint32_t dev_major;        ///< major of the device holding the file
  uint32_t dev_minor;        ///< minor of the device holding the file
  uint64_t spare2[14];       ///< unused
};

/// fuse_kstatfs: filesystem statistics, as statfs(2) reports them.
struct Kstatfs {
  uint64_t blocks;    ///< total blocks, in frsize units
  uint64_t bfree;     ///< free blocks
  uint64_t bavail;    ///< free blocks for unprivileged users
  uint64_t files;     ///< total inodes
  uint64_t ffree;     ///< free inodes
  uint32_t bsize;     ///< block size
  uint32_t namelen;   ///< longest name
  uint32_t frsize;    ///< fragment size
  uint32_t padding;   ///< unused
  uint32_t spare[6];  ///< unused
};

/// fuse_file_lock: a POSIX lock range.
struct FileLock {
  uint64_t start;  ///< first byte
  uint64_t end;    ///< last byte (OFFSET_MAX: to the end)
  uint32_t type;   ///< F_RDLCK, F_WRLCK or F_UNLCK
  uint32_t pid;    ///< the lock holder's thread group id
};

/// \name fuse_setattr_in.valid
//@{
inline constexpr uint32_t kFattrMode = 1u << 0;       ///< mode is set
inline constexpr uint32_t kFattrUid = 1u << 1;        ///< uid is set
inline constexpr uint32_t kFattrGid = 1u << 2;        ///< gid is set
inline constexpr uint32_t kFattrSize = 1u << 3;       ///< size is set
inline constexpr uint32_t kFattrAtime = 1u << 4;      ///< atime is set
inline constexpr uint32_t kFattrMtime = 1u << 5;      ///< mtime is set
inline constexpr uint32_t kFattrFh = 1u << 6;         ///< fh names the open file
inline constexpr uint32_t kFattrAtimeNow = 1u << 7;   ///< atime is set to the current time
inline constexpr uint32_t kFattrMtimeNow = 1u << 8;   ///< mtime is set to the current time
inline constexpr uint32_t kFattrLockOwner = 1u << 9;  ///< lock_owner is set
inline constexpr uint32_t kFattrCtime = 1u << 10;     ///< ctime is set
/// clear the set-user-ID and set-group-ID bits
inline constexpr uint32_t kFattrKillSuidGid = 1u << 11;
//@}

/// \name fuse_open_out.open_flags
//@{
inline constexpr uint32_t kFopenDirectIo = 1u << 0;   ///< bypass the page cache for this open file
inline constexpr uint32_t kFopenKeepCache = 1u << 1;  ///< keep the data cache on open
inline constexpr uint32_t kFopenNonSeekable = 1u << 2;  ///< the file is not seekable
inline constexpr uint32_t kFopenCacheDir = 1u << 3;     ///< allow caching this directory
/// the file is stream-like: no file position at all
inline constexpr uint32_t kFopenStream = 1u << 4;
inline constexpr uint32_t kFopenNoFlush = 1u << 5;  ///< no FLUSH on close (unless writeback cache)
/// allow concurrent direct writes on the same inode
inline constexpr uint32_t kFopenParallelDirectWrites = 1u << 6;
/// reads and writes go to the backing file (passthrough)
inline constexpr uint32_t kFopenPassthrough = 1u << 7;
//@}

/// INIT flags as one 64-bit set. Bits 32..63 travel in init_in/init_out.flags2 and only count when
/// kInitExt is set in the low word.
namespace init_flag {
inline constexpr uint64_t kAsyncRead = 1ull << 0;   ///< asynchronous read requests
inline constexpr uint64_t kPosixLocks = 1ull << 1;  ///< remote POSIX file locks
/// file handle for fstat etc. (unused by the kernel)
inline constexpr uint64_t kFileOps = 1ull << 2;
inline constexpr uint64_t kAtomicOTrunc = 1ull << 3;   ///< the server handles O_TRUNC in OPEN
inline constexpr uint64_t kExportSupport = 1ull << 4;  ///< the server handles lookups of . and ..
inline constexpr uint64_t kBigWrites = 1ull << 5;      ///< writes larger than 4 KiB
inline constexpr uint64_t kDontMask = 1ull << 6;       ///< no umask applied to modes on create
inline constexpr uint64_t kSpliceWrite = 1ull << 7;    ///< the kernel splices writes to the device
inline constexpr uint64_t kSpliceMove = 1ull << 8;     ///< the kernel moves pages with splice
inline constexpr uint64_t kSpliceRead = 1ull << 9;     ///< the kernel splices reads from the device
inline constexpr uint64_t kFlockLocks = 1ull << 10;    ///< remote BSD (flock) locks
inline constexpr uint64_t kHasIoctlDir = 1ull << 11;   ///< ioctl on directories
/// cached pages invalidated when mtime changes
inline constexpr uint64_t kAutoInvalData = 1ull << 12;
inline constexpr uint64_t kDoReaddirplus = 1ull << 13;  ///< READDIRPLUS (READDIR and LOOKUP in one)
inline constexpr uint64_t kReaddirplusAuto = 1ull << 14;  ///< READDIRPLUS only when it pays
inline constexpr uint64_t kAsyncDio = 1ull << 15;         ///< asynchronous direct I/O
inline constexpr uint64_t kWritebackCache = 1ull << 16;   ///< writeback cache for buffered writes
/// an OPEN answered ENOSYS means no OPEN needed
inline constexpr uint64_t kNoOpenSupport = 1ull << 17;
/// parallel lookups and readdirs in one directory
inline constexpr uint64_t kParallelDirops = 1ull << 18;
/// the server clears suid/sgid/caps on write, chown and truncate
inline constexpr uint64_t kHandleKillpriv = 1ull << 19;
inline constexpr uint64_t kPosixAcl = 1ull << 20;  ///< the server supports POSIX ACLs
/// reads after an abort fail with ECONNABORTED
inline constexpr uint64_t kAbortError = 1ull << 21;
/// init_out.max_pages holds the pages per request
inline constexpr uint64_t kMaxPages = 1ull << 22;
inline constexpr uint64_t kCacheSymlinks = 1ull << 23;  ///< READLINK answers are cached
/// an OPENDIR answered ENOSYS means no OPENDIR needed
inline constexpr uint64_t kNoOpendirSupport = 1ull << 24;
/// cached pages invalidated only on explicit request
inline constexpr uint64_t kExplicitInvalData = 1ull << 25;
/// init_out.map_alignment holds log2 of the DAX mapping alignment
inline constexpr uint64_t kMapAlignment = 1ull << 26;
/// the kernel auto-mounts submounts (kAttrSubmount)
inline constexpr uint64_t kSubmounts = 1ull << 27;
/// as kHandleKillpriv, the way the VFS does it (CAP_FSETID, group execute)
inline constexpr uint64_t kHandleKillprivV2 = 1ull << 28;
inline constexpr uint64_t kSetxattrExt = 1ull << 29;   ///< the extended fuse_setxattr_in
inline constexpr uint64_t kInitExt = 1ull << 30;       ///< flags2 is valid: bits 32..63 count
inline constexpr uint64_t kInitReserved = 1ull << 31;  ///< reserved, never set
/// security contexts with create, mkdir, symlink and mknod
inline constexpr uint64_t kSecurityCtx = 1ull << 32;
inline constexpr uint64_t kHasInodeDax = 1ull << 33;  ///< DAX per inode
/// a supplementary group with create, mkdir, symlink and mknod
inline constexpr uint64_t kCreateSuppGroup = 1ull << 34;
/// INVAL_ENTRY may expire only (kExpireOnly)
inline constexpr uint64_t kHasExpireOnly = 1ull << 35;
inline constexpr uint64_t kDirectIoAllowMmap = 1ull << 36;  ///< shared mmap with FOPEN_DIRECT_IO
/// passthrough of reads and writes to backing files
inline constexpr uint64_t kPassthrough = 1ull << 37;
inline constexpr uint64_t kNoExportSupport = 1ull << 38;  ///< export support explicitly off
/// NOTIFY_RESEND, with kUniqueResend in resent requests
inline constexpr uint64_t kHasResend = 1ull << 39;
inline constexpr uint64_t kAllowIdmap = 1ull << 40;   ///< idmapped mounts allowed
inline constexpr uint64_t kOverIoUring = 1ull << 41;  ///< FUSE-over-io_uring
/// init_out.request_timeout holds a timeout in seconds
inline constexpr uint64_t kRequestTimeout = 1ull << 42;
}  // namespace init_flag

inline constexpr uint32_t kCuseUnrestrictedIoctl = 1u << 0;  ///< CUSE INIT: unrestricted ioctls
/// fuse_release_in.release_flags: flush before release
inline constexpr uint32_t kReleaseFlush = 1u << 0;
/// fuse_release_in.release_flags: drop the file's flock locks
inline constexpr uint32_t kReleaseFlockUnlock = 1u << 1;
inline constexpr uint32_t kGetattrFh = 1u << 0;  ///< fuse_getattr_in.getattr_flags: fh is valid
/// fuse_lk_in.lk_flags: a BSD (flock) lock, not POSIX
inline constexpr uint32_t kLkFlock = 1u << 0;
/// fuse_write_in.write_flags: a delayed write from the page cache; fh is guessed
inline constexpr uint32_t kWriteCache = 1u << 0;
/// fuse_write_in.write_flags: lock_owner is valid
inline constexpr uint32_t kWriteLockOwner = 1u << 1;
/// fuse_write_in.write_flags: clear the suid and sgid bits
inline constexpr uint32_t kWriteKillSuidGid = 1u << 2;
/// fuse_read_in.read_flags: lock_owner is valid
inline constexpr uint32_t kReadLockOwner = 1u << 1;
/// fuse_ioctl_in.flags: a 32-bit compat ioctl on a 64-bit machine
inline constexpr uint32_t kIoctlCompat = 1u << 0;
/// fuse_ioctl_in.flags: not restricted to well-formed ioctls; retry allowed
inline constexpr uint32_t kIoctlUnrestricted = 1u << 1;
inline constexpr uint32_t kIoctlRetry = 1u << 2;  ///< fuse_ioctl_out.flags: retry with new iovecs
inline constexpr uint32_t kIoctl32Bit = 1u << 3;  ///< fuse_ioctl_in.flags: a 32-bit ioctl
inline constexpr uint32_t kIoctlDir = 1u << 4;    ///< fuse_ioctl_in.flags: on a directory
/// fuse_ioctl_in.flags: an x32 compat ioctl on a 64-bit machine
inline constexpr uint32_t kIoctlCompatX32 = 1u << 5;
inline constexpr uint32_t kIoctlMaxIov = 256;  ///< most in and out iovecs of one ioctl retry
/// fuse_poll_in.flags: the kernel wants a POLL notification later
inline constexpr uint32_t kPollScheduleNotify = 1u << 0;
/// fuse_fsync_in.fsync_flags: data only, not metadata
inline constexpr uint32_t kFsyncFdatasync = 1u << 0;
/// fuse_attr.flags: the node is a submount's root
inline constexpr uint32_t kAttrSubmount = 1u << 0;
/// fuse_attr.flags: DAX for this file in per-inode DAX mode
inline constexpr uint32_t kAttrDax = 1u << 1;
/// fuse_open_in.open_flags: clear suid and sgid if executable
inline constexpr uint32_t kOpenKillSuidGid = 1u << 0;
/// fuse_setxattr_in.setxattr_flags: clear sgid when system.posix_acl_access is set
inline constexpr uint32_t kSetxattrAclKillSgid = 1u << 0;
inline constexpr uint32_t kExpireOnly = 1u << 0;  ///< fuse_notify_inval_entry_out.flags

/// fuse_notify_code: the notifications a server sends (OutHeader.error).
enum class NotifyCode : int32_t {
  kPoll = 1,        ///< wake pollers (POLL)
  kInvalInode = 2,  ///< invalidate an inode's attributes or pages
  kInvalEntry = 3,  ///< invalidate a name in a directory
  kStore = 4,       ///< put data into the page cache
  kRetrieve = 5,    ///< ask for data from the page cache
  kDelete = 6,      ///< a name was deleted
  kResend = 7,      ///< resend pending requests
  kIncEpoch = 8,    ///< mark every cached dentry stale
  kPrune = 9,       ///< drop unused dentries of some inodes
};

/// fuse_entry_out: a lookup's answer.
struct EntryOut {
  uint64_t nodeid;            ///< node id; 0 for a negative entry
  uint64_t generation;        ///< node id's generation
  uint64_t entry_valid;       ///< name cache timeout, seconds
  uint64_t attr_valid;        ///< attribute cache timeout, seconds
  uint32_t entry_valid_nsec;  ///< nanoseconds of entry_valid
  uint32_t attr_valid_nsec;   ///< nanoseconds of attr_valid
  Attr attr;                  ///< the node's attributes
};

/// fuse_forget_in: FORGET's argument.
struct ForgetIn {
  uint64_t nlookup;  ///< lookups to drop
};

/// fuse_forget_one: one node of BATCH_FORGET.
struct ForgetOne {
  uint64_t nodeid;   ///< node id
  uint64_t nlookup;  ///< lookups to drop
};

/// fuse_batch_forget_in: BATCH_FORGET's argument, followed by `count` ForgetOne.
struct BatchForgetIn {
  uint32_t count;  ///< ForgetOne records that follow
  uint32_t dummy;  ///< unused
};

/// fuse_getattr_in: GETATTR's argument.
struct GetattrIn {
  uint32_t getattr_flags;  ///< kGetattrFh
  uint32_t dummy;          ///< unused
  uint64_t fh;             ///< open file, with kGetattrFh
};

/// fuse_attr_out: GETATTR's and SETATTR's answer.
struct AttrOut {
  uint64_t attr_valid;       ///< attribute cache timeout, seconds
  uint32_t attr_valid_nsec;  ///< nanoseconds of attr_valid
  uint32_t dummy;            ///< unused
  Attr attr;                 ///< the attributes
};

/// fuse_statx_in: STATX's argument.
struct StatxIn {
  uint32_t getattr_flags;  ///< kGetattrFh
  uint32_t reserved;       ///< unused
  uint64_t fh;             ///< open file, with kGetattrFh
  uint32_t sx_flags;       ///< statx(2) flags (AT_STATX_*)
  uint32_t sx_mask;        ///< fields asked for (STATX_*)
};

/// fuse_statx_out: STATX's answer.
struct StatxOut {
  uint64_t attr_valid;       ///< cache timeout, seconds
  uint32_t attr_valid_nsec;  ///< nanoseconds of attr_valid
  uint32_t flags;            ///< unused
  uint64_t spare[2];         ///< unused
  Statx stat;                ///< the result
};

/// fuse_mknod_in: MKNOD's argument, followed by the name.
struct MknodIn {
  uint32_t mode;     ///< file type and permissions
  uint32_t rdev;     ///< device number
  uint32_t umask;    ///< the caller's umask
  uint32_t padding;  ///< unused
};

/// fuse_mkdir_in: MKDIR's argument, followed by the name.
struct MkdirIn {
  uint32_t mode;   ///< permissions
  uint32_t umask;  ///< the caller's umask
};

/// fuse_rename_in: RENAME's argument, followed by the two names.
struct RenameIn {
  uint64_t newdir;  ///< node id of the target directory
};

/// fuse_rename2_in: RENAME2's argument, followed by the two names.
struct Rename2In {
  uint64_t newdir;   ///< node id of the target directory
  uint32_t flags;    ///< RENAME_NOREPLACE, RENAME_EXCHANGE, RENAME_WHITEOUT
  uint32_t padding;  ///< unused
};

/// fuse_link_in: LINK's argument, followed by the new name.
struct LinkIn {
  uint64_t oldnodeid;  ///< node id of the existing file
};

/// fuse_setattr_in: SETATTR's argument.
struct SetattrIn {
  uint32_t valid;       ///< which fields are set (kFattr*)
  uint32_t padding;     ///< unused
  uint64_t fh;          ///< open file, with kFattrFh
  uint64_t size;        ///< new size
  uint64_t lock_owner;  ///< lock owner, with kFattrLockOwner
  uint64_t atime;       ///< access time, seconds
  uint64_t mtime;       ///< modification time, seconds
  uint64_t ctime;       ///< status change time, seconds
  uint32_t atimensec;   ///< nanoseconds of atime
  uint32_t mtimensec;   ///< nanoseconds of mtime
  uint32_t ctimensec;   ///< nanoseconds of ctime
  uint32_t mode;        ///< new permissions
  uint32_t unused4;     ///< unused
  uint32_t uid;         ///< new owner
  uint32_t gid;         ///< new group
  uint32_t unused5;     ///< unused
};

/// fuse_open_in: OPEN's and OPENDIR's argument.
struct OpenIn {
  uint32_t flags;       ///< open(2) flags
  uint32_t open_flags;  ///< kOpenKillSuidGid
};

/// fuse_create_in: CREATE's argument, followed by the name.
struct CreateIn {
  uint32_t flags;       ///< open(2) flags
  uint32_t mode;        ///< file type and permissions
  uint32_t umask;       ///< the caller's umask
  uint32_t open_flags;  ///< kOpenKillSuidGid
};

/// fuse_open_out: OPEN's, OPENDIR's and CREATE's answer.
struct OpenOut {
  uint64_t fh;          ///< file handle later requests carry
  uint32_t open_flags;  ///< kFopen* flags
  int32_t backing_id;   ///< backing file id, with kFopenPassthrough
};

/// fuse_release_in: RELEASE's and RELEASEDIR's argument.
struct ReleaseIn {
  uint64_t fh;             ///< open file
  uint32_t flags;          ///< open(2) flags
  uint32_t release_flags;  ///< kReleaseFlush, kReleaseFlockUnlock
  uint64_t lock_owner;     ///< lock owner
};

/// fuse_flush_in: FLUSH's argument.
struct FlushIn {
  uint64_t fh;          ///< open file
  uint32_t unused;      ///< unused
  uint32_t padding;     ///< unused
  uint64_t lock_owner;  ///< lock owner of the closing caller
};

/// fuse_read_in: READ's, READDIR's and READDIRPLUS's argument.
struct ReadIn {
  uint64_t fh;          ///< open file or directory
  uint64_t offset;      ///< where to read from
  uint32_t size;        ///< bytes asked for
  uint32_t read_flags;  ///< kReadLockOwner
  uint64_t lock_owner;  ///< lock owner, with kReadLockOwner
  uint32_t flags;       ///< open(2) flags
  uint32_t padding;     ///< unused
};

/// fuse_write_in: WRITE's argument, followed by the data.
struct WriteIn {
  uint64_t fh;           ///< open file
  uint64_t offset;       ///< where to write
  uint32_t size;         ///< bytes to write
  uint32_t write_flags;  ///< kWriteCache, kWriteLockOwner, kWriteKillSuidGid
  uint64_t lock_owner;   ///< lock owner, with kWriteLockOwner
  uint32_t flags;        ///< open(2) flags
  uint32_t padding;      ///< unused
};

/// fuse_write_out: WRITE's and COPY_FILE_RANGE's answer.
struct WriteOut {
  uint32_t size;     ///< bytes written
  uint32_t padding;  ///< unused
};

/// fuse_statfs_out: STATFS's answer.
struct StatfsOut {
  Kstatfs st;  ///< the statistics
};

/// fuse_fsync_in: FSYNC's and FSYNCDIR's argument.
struct FsyncIn {
  uint64_t fh;           ///< open file
  uint32_t fsync_flags;  ///< kFsyncFdatasync
  uint32_t padding;      ///< unused
};

/// Kernels send only the first 8 bytes unless FUSE_SETXATTR_EXT was agreed at INIT.
inline constexpr size_t kCompatSetxattrInSize = 8;

/// fuse_setxattr_in: SETXATTR's argument, followed by the name and the value.
struct SetxattrIn {
  uint32_t size;            ///< bytes of the value
  uint32_t flags;           ///< XATTR_CREATE, XATTR_REPLACE
  uint32_t setxattr_flags;  ///< kSetxattrAclKillSgid (with kSetxattrExt)
  uint32_t padding;         ///< unused
};

/// fuse_getxattr_in: GETXATTR's and LISTXATTR's argument.
struct GetxattrIn {
  uint32_t size;     ///< buffer size; 0 asks for the size needed
  uint32_t padding;  ///< unused
};

/// fuse_getxattr_out: the size GETXATTR or LISTXATTR needs.
struct GetxattrOut {
  uint32_t size;     ///< bytes needed
  uint32_t padding;  ///< unused
};

/// fuse_lk_in: GETLK's, SETLK's and SETLKW's argument.
struct LkIn {
  uint64_t fh;        ///< open file
  uint64_t owner;     ///< lock owner
  FileLock lk;        ///< the lock
  uint32_t lk_flags;  ///< kLkFlock
  uint32_t padding;   ///< unused
};

/// fuse_lk_out: GETLK's answer.
struct LkOut {
  FileLock lk;  ///< the conflicting lock, or F_UNLCK
};

/// fuse_access_in: ACCESS's argument.
struct AccessIn {
  uint32_t mask;     ///< R_OK, W_OK, X_OK or F_OK
  uint32_t padding;  ///< unused
};

/// Kernels before 7.36 send only the first 16 bytes (no flags2).
inline constexpr size_t kCompatInitInSize = 16;

/// fuse_init_in: the kernel's INIT offer.
struct InitIn {
  uint32_t major;          ///< protocol major
  uint32_t minor;          ///< protocol minor
  uint32_t max_readahead;  ///< largest readahead, bytes
  uint32_t flags;          ///< INIT flags, low 32 bits
  uint32_t flags2;         ///< INIT flags, high 32 bits (with kInitExt)
  uint32_t unused[11];     ///< unused
};

/// fuse_init_out: the server's INIT answer.
struct InitOut {
  uint32_t major;                 ///< protocol major
  uint32_t minor;                 ///< protocol minor
  uint32_t max_readahead;         ///< largest readahead, bytes
  uint32_t flags;                 ///< INIT flags, low 32 bits
  uint16_t max_background;        ///< background requests at most
  uint16_t congestion_threshold;  ///< background requests that mark the connection congested
  uint32_t max_write;             ///< largest WRITE, bytes
  uint32_t time_gran;             ///< timestamp granularity, nanoseconds
  uint16_t max_pages;             ///< pages per request, with kMaxPages
  uint16_t map_alignment;         ///< log2 of the DAX mapping alignment, with kMapAlignment
  uint32_t flags2;                ///< INIT flags, high 32 bits
  uint32_t max_stack_depth;       ///< passthrough stacking depth, with kPassthrough
  uint16_t request_timeout;       ///< request timeout in seconds, with kRequestTimeout
  uint16_t unused[11];            ///< unused
};

/// fuse_interrupt_in: INTERRUPT's argument.
struct InterruptIn {
  uint64_t unique;  ///< unique of the request to interrupt
};

/// fuse_bmap_in: BMAP's argument.
struct BmapIn {
  uint64_t block;      ///< block within the file
  uint32_t blocksize;  ///< block size
  uint32_t padding;    ///< unused
};

/// fuse_bmap_out: BMAP's answer.
struct BmapOut {
  uint64_t block;  ///< block on the device
};

/// fuse_ioctl_in: IOCTL's argument, followed by in_size bytes of input.
struct IoctlIn {
  uint64_t fh;        ///< open file
  uint32_t flags;     ///< kIoctl* flags
  uint32_t cmd;       ///< the ioctl command
  uint64_t arg;       ///< the ioctl's argument (a user address)
  uint32_t in_size;   ///< bytes of input that follow
  uint32_t out_size;  ///< bytes of output room
};

/// fuse_ioctl_iovec: a user buffer for an unrestricted ioctl retry.
struct IoctlIovec {
  uint64_t base;  ///< address
  uint64_t len;   ///< length
};

/// fuse_ioctl_out: IOCTL's answer, followed by the output or the retry's iovecs.
struct IoctlOut {
  int32_t result;     ///< the ioctl's return value
  uint32_t flags;     ///< kIoctlRetry
  uint32_t in_iovs;   ///< input iovecs, with kIoctlRetry
  uint32_t out_iovs;  ///< output iovecs, with kIoctlRetry
};

/// fuse_poll_in: POLL's argument.
struct PollIn {
  uint64_t fh;      ///< open file
  uint64_t kh;      ///< kernel handle for a later POLL notification
  uint32_t flags;   ///< kPollScheduleNotify
  uint32_t events;  ///< poll events asked for
};

/// fuse_poll_out: POLL's answer.
struct PollOut {
  uint32_t revents;  ///< ready events
  uint32_t padding;  ///< unused
};

/// fuse_fallocate_in: FALLOCATE's argument.
struct FallocateIn {
  uint64_t fh;       ///< open file
  uint64_t offset;   ///< start of the range
  uint64_t length;   ///< length of the range
  uint32_t mode;     ///< fallocate(2) mode
  uint32_t padding;  ///< unused
};

/// fuse_in_header: the head of every request.
struct InHeader {
  uint32_t len;           ///< whole request, bytes
  uint32_t opcode;        ///< the operation
  uint64_t unique;        ///< request id, echoed in the reply
  uint64_t nodeid;        ///< node the request is about
  uint32_t uid;           ///< caller's filesystem uid
  uint32_t gid;           ///< caller's filesystem gid
  uint32_t pid;           ///< caller's thread group id
  uint16_t total_extlen;  ///< request extensions, in 8-byte units (7.38; padding before)
  uint16_t padding;       ///< unused
};

/// fuse_out_header: the head of every reply and notification.
struct OutHeader {
  uint32_t len;     ///< whole message, bytes
  int32_t error;    ///< 0 or a negative errno; a notification's code
  uint64_t unique;  ///< the request's id; 0 for a notification
};

/// A directory entry is this header, then namelen bytes of name, padded to 8 bytes.
struct Dirent {
  uint64_t ino;      ///< inode number
  uint64_t off;      ///< cookie of the next entry
  uint32_t namelen;  ///< bytes of the name
  uint32_t type;     ///< d_type (DT_REG, ...)
};

/// fuse_direntplus: a READDIRPLUS entry: the lookup, then the entry.
struct DirentPlus {
  EntryOut entry_out;  ///< the lookup's answer
  Dirent dirent;       ///< the directory entry
};

inline constexpr size_t kDirentAlignment = 8;  ///< directory entries are padded to this many bytes

/// fuse_notify_retrieve_out: RETRIEVE's payload.
struct NotifyRetrieveOut {
  uint64_t notify_unique;  ///< unique the NOTIFY_REPLY will carry
  uint64_t nodeid;         ///< node id
  uint64_t offset;         ///< first byte asked for
  uint32_t size;           ///< bytes asked for
  uint32_t padding;        ///< unused
};

/// The kernel's answer to a RETRIEVE notification (opcode NOTIFY_REPLY); shaped like WriteIn.
struct NotifyRetrieveIn {
  uint64_t dummy1;  ///< unused
  uint64_t offset;  ///< where the data starts
  uint32_t size;    ///< bytes that follow
  uint32_t dummy2;  ///< unused
  uint64_t dummy3;  ///< unused
  uint64_t dummy4;  ///< unused
};

/// fuse_lseek_in: LSEEK's argument.
struct LseekIn {
  uint64_t fh;       ///< open file
  uint64_t offset;   ///< where to search from
  uint32_t whence;   ///< SEEK_DATA or SEEK_HOLE
  uint32_t padding;  ///< unused
};

/// fuse_lseek_out: LSEEK's answer.
struct LseekOut {
  uint64_t offset;  ///< the offset found
};

/// fuse_copy_file_range_in: COPY_FILE_RANGE's argument; the source is the request's node.
struct CopyFileRangeIn {
  uint64_t fh_in;       ///< source open file
  uint64_t off_in;      ///< source offset
  uint64_t nodeid_out;  ///< destination node id
  uint64_t fh_out;      ///< destination open file
  uint64_t off_out;     ///< destination offset
  uint64_t len;         ///< bytes to copy
  uint64_t flags;       ///< copy_file_range(2) flags
};

/// The reply to COPY_FILE_RANGE_64; plain COPY_FILE_RANGE answers with WriteOut.
struct CopyFileRangeOut {
  uint64_t bytes_copied;  ///< bytes copied
};

/// fuse_setupmapping_in.flags: map writable
inline constexpr uint64_t kSetupMappingFlagWrite = 1ull << 0;
/// fuse_setupmapping_in.flags: map readable
inline constexpr uint64_t kSetupMappingFlagRead = 1ull << 1;

/// fuse_setupmapping_in: SETUPMAPPING's argument (DAX).
struct SetupMappingIn {
  uint64_t fh;       ///< open file
  uint64_t foffset;  ///< offset in the file
  uint64_t len;      ///< length
  uint64_t flags;    ///< kSetupMappingFlagWrite, kSetupMappingFlagRead
  uint64_t moffset;  ///< offset in the DAX window
};

/// Followed by `count` RemoveMappingOne records. 4 bytes: the only odd-sized argument struct.
struct RemoveMappingIn {
  uint32_t count;  ///< RemoveMappingOne records that follow
};

/// fuse_removemapping_one: a range of the DAX window to unmap.
struct RemoveMappingOne {
  uint64_t moffset;  ///< offset in the DAX window
  uint64_t len;      ///< length
};

/// fuse_syncfs_in: SYNCFS's argument.
struct SyncfsIn {
  uint64_t padding;  ///< unused
};

// Layout pins. A failure here means a struct above no longer matches the kernel.
#define RINGFUSE_PIN(T, size) static_assert(sizeof(T) == (size), #T " size")
#define RINGFUSE_AT(T, field, off) static_assert(offsetof(T, field) == (off), #T "." #field)
RINGFUSE_PIN(Attr, 88);
RINGFUSE_AT(Attr, ino, 0);
RINGFUSE_AT(Attr, size, 8);
RINGFUSE_AT(Attr, blocks, 16);
RINGFUSE_AT(Attr, atime, 24);
RINGFUSE_AT(Attr, mtime, 32);
RINGFUSE_AT(Attr, ctime, 40);
RINGFUSE_AT(Attr, atimensec, 48);
RINGFUSE_AT(Attr, mtimensec, 52);
RINGFUSE_AT(Attr, ctimensec, 56);
RINGFUSE_AT(Attr, mode, 60);
RINGFUSE_AT(Attr, nlink, 64);
RINGFUSE_AT(Attr, uid, 68);
RINGFUSE_AT(Attr, gid, 72);
RINGFUSE_AT(Attr, rdev, 76);
RINGFUSE_AT(Attr, blksize, 80);
RINGFUSE_AT(Attr, flags, 84);
RINGFUSE_PIN(SxTime, 16);
RINGFUSE_AT(SxTime, tv_sec, 0);
RINGFUSE_AT(SxTime, tv_nsec, 8);
RINGFUSE_AT(SxTime, reserved, 12);
RINGFUSE_PIN(Statx, 256);
RINGFUSE_AT(Statx, mask, 0);
RINGFUSE_AT(Statx, blksize, 4);
RINGFUSE_AT(Statx, attributes, 8);
RINGFUSE_AT(Statx, nlink, 16);
RINGFUSE_AT(Statx, uid, 20);
RINGFUSE_AT(Statx, gid, 24);
RINGFUSE_AT(Statx, mode, 28);
RINGFUSE_AT(Statx, spare0, 30);
RINGFUSE_AT(Statx, ino, 32);
RINGFUSE_AT(Statx, size, 40);
RINGFUSE_AT(Statx, blocks, 48);
RINGFUSE_AT(Statx, attributes_mask, 56);
RINGFUSE_AT(Statx, atime, 64);
RINGFUSE_AT(Statx, btime, 80);
RINGFUSE_AT(Statx, ctime, 96);
RINGFUSE_AT(Statx, mtime, 112);
RINGFUSE_AT(Statx, rdev_major, 128);
RINGFUSE_AT(Statx, rdev_minor, 132);
RINGFUSE_AT(Statx, dev_major, 136);
RINGFUSE_AT(Statx, dev_minor, 140);
RINGFUSE_AT(Statx, spare2, 144);
RINGFUSE_PIN(Kstatfs, 80);
RINGFUSE_AT(Kstatfs, blocks, 0);
RINGFUSE_AT(Kstatfs, bfree, 8);
RINGFUSE_AT(Kstatfs, bavail, 16);
RINGFUSE_AT(Kstatfs, files, 24);
RINGFUSE_AT(Kstatfs, ffree, 32);
RINGFUSE_AT(Kstatfs, bsize, 40);
RINGFUSE_AT(Kstatfs, namelen, 44);
RINGFUSE_AT(Kstatfs, frsize, 48);
RINGFUSE_AT(Kstatfs, padding, 52);
RINGFUSE_AT(Kstatfs, spare, 56);
RINGFUSE_PIN(FileLock, 24);
RINGFUSE_AT(FileLock, start, 0);
RINGFUSE_AT(FileLock, end, 8);
RINGFUSE_AT(FileLock, type, 16);
RINGFUSE_AT(FileLock, pid, 20);
RINGFUSE_PIN(EntryOut, 128);
RINGFUSE_AT(EntryOut, nodeid, 0);
RINGFUSE_AT(EntryOut, generation, 8);
RINGFUSE_AT(EntryOut, entry_valid, 16);
RINGFUSE_AT(EntryOut, attr_valid, 24);
RINGFUSE_AT(EntryOut, entry_valid_nsec, 32);
RINGFUSE_AT(EntryOut, attr_valid_nsec, 36);
RINGFUSE_AT(EntryOut, attr, 40);
RINGFUSE_PIN(ForgetIn, 8);
RINGFUSE_PIN(ForgetOne, 16);
RINGFUSE_AT(ForgetOne, nlookup, 8);
RINGFUSE_PIN(BatchForgetIn, 8);
RINGFUSE_AT(BatchForgetIn, dummy, 4);
RINGFUSE_PIN(GetattrIn, 16);
RINGFUSE_AT(GetattrIn, dummy, 4);
RINGFUSE_AT(GetattrIn, fh, 8);
RINGFUSE_PIN(AttrOut, 104);
RINGFUSE_AT(AttrOut, attr_valid_nsec, 8);
RINGFUSE_AT(AttrOut, dummy, 12);
RINGFUSE_AT(AttrOut, attr, 16);
RINGFUSE_PIN(StatxIn, 24);
RINGFUSE_AT(StatxIn, reserved, 4);
RINGFUSE_AT(StatxIn, fh, 8);
RINGFUSE_AT(StatxIn, sx_flags, 16);
RINGFUSE_AT(StatxIn, sx_mask, 20);
RINGFUSE_PIN(StatxOut, 288);
RINGFUSE_AT(StatxOut, attr_valid_nsec, 8);
RINGFUSE_AT(StatxOut, flags, 12);
RINGFUSE_AT(StatxOut, spare, 16);
RINGFUSE_AT(StatxOut, stat, 32);
RINGFUSE_PIN(MknodIn, 16);
RINGFUSE_AT(MknodIn, rdev, 4);
RINGFUSE_AT(MknodIn, umask, 8);
RINGFUSE_AT(MknodIn, padding, 12);
RINGFUSE_PIN(MkdirIn, 8);
RINGFUSE_AT(MkdirIn, umask, 4);
RINGFUSE_PIN(RenameIn, 8);
RINGFUSE_PIN(Rename2In, 16);
RINGFUSE_AT(Rename2In, flags, 8);
RINGFUSE_AT(Rename2In, padding, 12);
RINGFUSE_PIN(LinkIn, 8);
RINGFUSE_PIN(SetattrIn, 88);
RINGFUSE_AT(SetattrIn, valid, 0);
RINGFUSE_AT(SetattrIn, padding, 4);
RINGFUSE_AT(SetattrIn, fh, 8);
RINGFUSE_AT(SetattrIn, size, 16);
RINGFUSE_AT(SetattrIn, lock_owner, 24);
RINGFUSE_AT(SetattrIn, atime, 32);
RINGFUSE_AT(SetattrIn, mtime, 40);
RINGFUSE_AT(SetattrIn, ctime, 48);
RINGFUSE_AT(SetattrIn, atimensec, 56);
RINGFUSE_AT(SetattrIn, mtimensec, 60);
RINGFUSE_AT(SetattrIn, ctimensec, 64);
RINGFUSE_AT(SetattrIn, mode, 68);
RINGFUSE_AT(SetattrIn, unused4, 72);
RINGFUSE_AT(SetattrIn, uid, 76);
RINGFUSE_AT(SetattrIn, gid, 80);
RINGFUSE_AT(SetattrIn, unused5, 84);
RINGFUSE_PIN(OpenIn, 8);
RINGFUSE_AT(OpenIn, open_flags, 4);
RINGFUSE_PIN(CreateIn, 16);
RINGFUSE_AT(CreateIn, mode, 4);
RINGFUSE_AT(CreateIn, umask, 8);
RINGFUSE_AT(CreateIn, open_flags, 12);
RINGFUSE_PIN(OpenOut, 16);
RINGFUSE_AT(OpenOut, open_flags, 8);
RINGFUSE_AT(OpenOut, backing_id, 12);
RINGFUSE_PIN(ReleaseIn, 24);
RINGFUSE_AT(ReleaseIn, flags, 8);
RINGFUSE_AT(ReleaseIn, release_flags, 12);
RINGFUSE_AT(ReleaseIn, lock_owner, 16);
RINGFUSE_PIN(FlushIn, 24);
RINGFUSE_AT(FlushIn, unused, 8);
RINGFUSE_AT(FlushIn, padding, 12);
RINGFUSE_AT(FlushIn, lock_owner, 16);
RINGFUSE_PIN(ReadIn, 40);
RINGFUSE_AT(ReadIn, offset, 8);
RINGFUSE_AT(ReadIn, size, 16);
RINGFUSE_AT(ReadIn, read_flags, 20);
RINGFUSE_AT(ReadIn, lock_owner, 24);
RINGFUSE_AT(ReadIn, flags, 32);
RINGFUSE_AT(ReadIn, padding, 36);
RINGFUSE_PIN(WriteIn, 40);
RINGFUSE_AT(WriteIn, offset, 8);
RINGFUSE_AT(WriteIn, size, 16);
RINGFUSE_AT(WriteIn, write_flags, 20);
RINGFUSE_AT(WriteIn, lock_owner, 24);
RINGFUSE_AT(WriteIn, flags, 32);
RINGFUSE_AT(WriteIn, padding, 36);
RINGFUSE_PIN(WriteOut, 8);
RINGFUSE_PIN(StatfsOut, 80);
RINGFUSE_PIN(FsyncIn, 16);
RINGFUSE_AT(FsyncIn, fsync_flags, 8);
RINGFUSE_PIN(SetxattrIn, 16);
RINGFUSE_AT(SetxattrIn, flags, 4);
RINGFUSE_AT(SetxattrIn, setxattr_flags, 8);
RINGFUSE_AT(SetxattrIn, padding, 12);
RINGFUSE_PIN(GetxattrIn, 8);
RINGFUSE_PIN(GetxattrOut, 8);
RINGFUSE_PIN(LkIn, 48);
RINGFUSE_AT(LkIn, owner, 8);
RINGFUSE_AT(LkIn, lk, 16);
RINGFUSE_AT(LkIn, lk_flags, 40);
RINGFUSE_AT(LkIn, padding, 44);
RINGFUSE_PIN(LkOut, 24);
RINGFUSE_PIN(AccessIn, 8);
RINGFUSE_PIN(InitIn, 64);
RINGFUSE_AT(InitIn, minor, 4);
RINGFUSE_AT(InitIn, max_readahead, 8);
RINGFUSE_AT(InitIn, flags, 12);
RINGFUSE_AT(InitIn, flags2, 16);
RINGFUSE_AT(InitIn, unused, 20);
RINGFUSE_PIN(InitOut, 64);
RINGFUSE_AT(InitOut, minor, 4);
RINGFUSE_AT(InitOut, max_readahead, 8);
RINGFUSE_AT(InitOut, flags, 12);
RINGFUSE_AT(InitOut, max_background, 16);
RINGFUSE_AT(InitOut, congestion_threshold, 18);
RINGFUSE_AT(InitOut, max_write, 20);
RINGFUSE_AT(InitOut, time_gran, 24);
RINGFUSE_AT(InitOut, max_pages, 28);
RINGFUSE_AT(InitOut, map_alignment, 30);
RINGFUSE_AT(InitOut, flags2, 32);
RINGFUSE_AT(InitOut, max_stack_depth, 36);
RINGFUSE_AT(InitOut, request_timeout, 40);
RINGFUSE_AT(InitOut, unused, 42);
RINGFUSE_PIN(InterruptIn, 8);
RINGFUSE_PIN(BmapIn, 16);
RINGFUSE_AT(BmapIn, blocksize, 8);
RINGFUSE_PIN(BmapOut, 8);
RINGFUSE_PIN(IoctlIn, 32);
RINGFUSE_AT(IoctlIn, flags, 8);
RINGFUSE_AT(IoctlIn, cmd, 12);
RINGFUSE_AT(IoctlIn, arg, 16);
RINGFUSE_AT(IoctlIn, in_size, 24);
RINGFUSE_AT(IoctlIn, out_size, 28);
RINGFUSE_PIN(IoctlIovec, 16);
RINGFUSE_PIN(IoctlOut, 16);
RINGFUSE_AT(IoctlOut, flags, 4);
RINGFUSE_AT(IoctlOut, in_iovs, 8);
RINGFUSE_AT(IoctlOut, out_iovs, 12);
RINGFUSE_PIN(PollIn, 24);
RINGFUSE_AT(PollIn, kh, 8);
RINGFUSE_AT(PollIn, flags, 16);
RINGFUSE_AT(PollIn, events, 20);
RINGFUSE_PIN(PollOut, 8);
RINGFUSE_PIN(FallocateIn, 32);
RINGFUSE_AT(FallocateIn, offset, 8);
RINGFUSE_AT(FallocateIn, length, 16);
RINGFUSE_AT(FallocateIn, mode, 24);
RINGFUSE_PIN(InHeader, 40);
RINGFUSE_AT(InHeader, opcode, 4);
RINGFUSE_AT(InHeader, unique, 8);
RINGFUSE_AT(InHeader, nodeid, 16);
RINGFUSE_AT(InHeader, uid, 24);
RINGFUSE_AT(InHeader, gid, 28);
RINGFUSE_AT(InHeader, pid, 32);
RINGFUSE_AT(InHeader, total_extlen, 36);
RINGFUSE_AT(InHeader, padding, 38);
RINGFUSE_PIN(OutHeader, 16);
RINGFUSE_AT(OutHeader, error, 4);
RINGFUSE_AT(OutHeader, unique, 8);
RINGFUSE_PIN(Dirent, 24);
RINGFUSE_AT(Dirent, off, 8);
RINGFUSE_AT(Dirent, namelen, 16);
RINGFUSE_AT(Dirent, type, 20);
RINGFUSE_PIN(DirentPlus, 152);
RINGFUSE_AT(DirentPlus, dirent, 128);
RINGFUSE_PIN(NotifyRetrieveOut, 32);
RINGFUSE_AT(NotifyRetrieveOut, nodeid, 8);
RINGFUSE_AT(NotifyRetrieveOut, offset, 16);
RINGFUSE_AT(NotifyRetrieveOut, size, 24);
RINGFUSE_PIN(NotifyRetrieveIn, 40);
RINGFUSE_AT(NotifyRetrieveIn, offset, 8);
RINGFUSE_AT(NotifyRetrieveIn, size, 16);
RINGFUSE_AT(NotifyRetrieveIn, dummy3, 24);
RINGFUSE_AT(NotifyRetrieveIn, dummy4, 32);
RINGFUSE_PIN(LseekIn, 24);
RINGFUSE_AT(LseekIn, offset, 8);
RINGFUSE_AT(LseekIn, whence, 16);
RINGFUSE_PIN(LseekOut, 8);
RINGFUSE_PIN(CopyFileRangeIn, 56);
RINGFUSE_AT(CopyFileRangeIn, off_in, 8);
RINGFUSE_AT(CopyFileRangeIn, nodeid_out, 16);
RINGFUSE_AT(CopyFileRangeIn, fh_out, 24);
RINGFUSE_AT(CopyFileRangeIn, off_out, 32);
RINGFUSE_AT(CopyFileRangeIn, len, 40);
RINGFUSE_AT(CopyFileRangeIn, flags, 48);
RINGFUSE_PIN(CopyFileRangeOut, 8);
RINGFUSE_PIN(SetupMappingIn, 40);
RINGFUSE_AT(SetupMappingIn, foffset, 8);
RINGFUSE_AT(SetupMappingIn, len, 16);
RINGFUSE_AT(SetupMappingIn, flags, 24);
RINGFUSE_AT(SetupMappingIn, moffset, 32);
RINGFUSE_PIN(RemoveMappingIn, 4);
RINGFUSE_PIN(RemoveMappingOne, 16);
RINGFUSE_AT(RemoveMappingOne, len, 8);
RINGFUSE_PIN(SyncfsIn, 8);
#undef RINGFUSE_PIN
#undef RINGFUSE_AT

}  // namespace ringfuse::wire

RINGFUSE_PUBLIC_END
