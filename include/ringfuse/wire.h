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

inline constexpr uint32_t kKernelMajor = 7;
inline constexpr uint32_t kKernelMinor = 45;
/// The oldest kernel protocol ringfuse accepts (Linux 5.10 speaks 7.32; 7.31 adds nothing we need).
inline constexpr uint32_t kOldestSupportedMinor = 31;
inline constexpr uint64_t kRootId = 1;
inline constexpr size_t kMinReadBuffer = 8192;
inline constexpr uint64_t kUniqueResend = uint64_t{1} << 63;
/// INTERRUPT requests carry the interrupted request's unique with this bit set.
inline constexpr uint64_t kInterruptUniqueBit = 1;
inline constexpr uint32_t kInvalidUidGid = 0xffffffffu;

/// The kernel's own limits on names (fs/fuse/fuse_i.h FUSE_NAME_MAX, PATH_MAX, XATTR_NAME_MAX).
inline constexpr size_t kNameMax = 1024;
inline constexpr size_t kSymlinkTargetMax = 4095;
inline constexpr size_t kXattrNameMax = 255;
/// The VFS caps getxattr and listxattr buffers at XATTR_SIZE_MAX and XATTR_LIST_MAX (both 64 KiB),
/// so the kernel never asks a FUSE server for more.
inline constexpr uint32_t kXattrSizeMax = 65536;
/// The most any connection can negotiate: max_pages is 16 bits, pages at most 64 KiB.
inline constexpr uint32_t kMaxReplyAnyConnection = 0xffffu * 65536u;

struct Attr {
  uint64_t ino;
  uint64_t size;
  uint64_t blocks;
  uint64_t atime;
  uint64_t mtime;
  uint64_t ctime;
  uint32_t atimensec;
  uint32_t mtimensec;
  uint32_t ctimensec;
  uint32_t mode;
  uint32_t nlink;
  uint32_t uid;
  uint32_t gid;
  uint32_t rdev;
  uint32_t blksize;
  uint32_t flags;  ///< kAttr*
};

struct SxTime {
  int64_t tv_sec;
  uint32_t tv_nsec;
  int32_t reserved;
};

struct Statx {
  uint32_t mask;
  uint32_t blksize;
  uint64_t attributes;
  uint32_t nlink;
  uint32_t uid;
  uint32_t gid;
  uint16_t mode;
  uint16_t spare0[1];
  uint64_t ino;
  uint64_t size;
  uint64_t blocks;
  uint64_t attributes_mask;
  SxTime atime;
  SxTime btime;
  SxTime ctime;
  SxTime mtime;
  uint32_t rdev_major;
  uint32_t rdev_minor;
  uint32_t dev_major;
  uint32_t dev_minor;
  uint64_t spare2[14];
};

struct Kstatfs {
  uint64_t blocks;
  uint64_t bfree;
  uint64_t bavail;
  uint64_t files;
  uint64_t ffree;
  uint32_t bsize;
  uint32_t namelen;
  uint32_t frsize;
  uint32_t padding;
  uint32_t spare[6];
};

struct FileLock {
  uint64_t start;
  uint64_t end;
  uint32_t type;
  uint32_t pid;
};

/// fuse_setattr_in.valid
inline constexpr uint32_t kFattrMode = 1u << 0;
inline constexpr uint32_t kFattrUid = 1u << 1;
inline constexpr uint32_t kFattrGid = 1u << 2;
inline constexpr uint32_t kFattrSize = 1u << 3;
inline constexpr uint32_t kFattrAtime = 1u << 4;
inline constexpr uint32_t kFattrMtime = 1u << 5;
inline constexpr uint32_t kFattrFh = 1u << 6;
inline constexpr uint32_t kFattrAtimeNow = 1u << 7;
inline constexpr uint32_t kFattrMtimeNow = 1u << 8;
inline constexpr uint32_t kFattrLockOwner = 1u << 9;
inline constexpr uint32_t kFattrCtime = 1u << 10;
inline constexpr uint32_t kFattrKillSuidGid = 1u << 11;

/// fuse_open_out.open_flags
inline constexpr uint32_t kFopenDirectIo = 1u << 0;
inline constexpr uint32_t kFopenKeepCache = 1u << 1;
inline constexpr uint32_t kFopenNonSeekable = 1u << 2;
inline constexpr uint32_t kFopenCacheDir = 1u << 3;
inline constexpr uint32_t kFopenStream = 1u << 4;
inline constexpr uint32_t kFopenNoFlush = 1u << 5;
inline constexpr uint32_t kFopenParallelDirectWrites = 1u << 6;
inline constexpr uint32_t kFopenPassthrough = 1u << 7;

/// INIT flags as one 64-bit set. Bits 32..63 travel in init_in/init_out.flags2 and only count when
/// kInitExt is set in the low word.
namespace init_flag {
inline constexpr uint64_t kAsyncRead = 1ull << 0;
inline constexpr uint64_t kPosixLocks = 1ull << 1;
inline constexpr uint64_t kFileOps = 1ull << 2;
inline constexpr uint64_t kAtomicOTrunc = 1ull << 3;
inline constexpr uint64_t kExportSupport = 1ull << 4;
inline constexpr uint64_t kBigWrites = 1ull << 5;
inline constexpr uint64_t kDontMask = 1ull << 6;
inline constexpr uint64_t kSpliceWrite = 1ull << 7;
inline constexpr uint64_t kSpliceMove = 1ull << 8;
inline constexpr uint64_t kSpliceRead = 1ull << 9;
inline constexpr uint64_t kFlockLocks = 1ull << 10;
inline constexpr uint64_t kHasIoctlDir = 1ull << 11;
inline constexpr uint64_t kAutoInvalData = 1ull << 12;
inline constexpr uint64_t kDoReaddirplus = 1ull << 13;
inline constexpr uint64_t kReaddirplusAuto = 1ull << 14;
inline constexpr uint64_t kAsyncDio = 1ull << 15;
inline constexpr uint64_t kWritebackCache = 1ull << 16;
inline constexpr uint64_t kNoOpenSupport = 1ull << 17;
inline constexpr uint64_t kParallelDirops = 1ull << 18;
inline constexpr uint64_t kHandleKillpriv = 1ull << 19;
inline constexpr uint64_t kPosixAcl = 1ull << 20;
inline constexpr uint64_t kAbortError = 1ull << 21;
inline constexpr uint64_t kMaxPages = 1ull << 22;
inline constexpr uint64_t kCacheSymlinks = 1ull << 23;
inline constexpr uint64_t kNoOpendirSupport = 1ull << 24;
inline constexpr uint64_t kExplicitInvalData = 1ull << 25;
inline constexpr uint64_t kMapAlignment = 1ull << 26;
inline constexpr uint64_t kSubmounts = 1ull << 27;
inline constexpr uint64_t kHandleKillprivV2 = 1ull << 28;
inline constexpr uint64_t kSetxattrExt = 1ull << 29;
inline constexpr uint64_t kInitExt = 1ull << 30;
inline constexpr uint64_t kInitReserved = 1ull << 31;
inline constexpr uint64_t kSecurityCtx = 1ull << 32;
inline constexpr uint64_t kHasInodeDax = 1ull << 33;
inline constexpr uint64_t kCreateSuppGroup = 1ull << 34;
inline constexpr uint64_t kHasExpireOnly = 1ull << 35;
inline constexpr uint64_t kDirectIoAllowMmap = 1ull << 36;
inline constexpr uint64_t kPassthrough = 1ull << 37;
inline constexpr uint64_t kNoExportSupport = 1ull << 38;
inline constexpr uint64_t kHasResend = 1ull << 39;
inline constexpr uint64_t kAllowIdmap = 1ull << 40;
inline constexpr uint64_t kOverIoUring = 1ull << 41;
inline constexpr uint64_t kRequestTimeout = 1ull << 42;
}  // namespace init_flag

inline constexpr uint32_t kCuseUnrestrictedIoctl = 1u << 0;
inline constexpr uint32_t kReleaseFlush = 1u << 0;
inline constexpr uint32_t kReleaseFlockUnlock = 1u << 1;
inline constexpr uint32_t kGetattrFh = 1u << 0;
inline constexpr uint32_t kLkFlock = 1u << 0;
inline constexpr uint32_t kWriteCache = 1u << 0;
inline constexpr uint32_t kWriteLockOwner = 1u << 1;
inline constexpr uint32_t kWriteKillSuidGid = 1u << 2;
inline constexpr uint32_t kReadLockOwner = 1u << 1;
inline constexpr uint32_t kIoctlCompat = 1u << 0;
inline constexpr uint32_t kIoctlUnrestricted = 1u << 1;
inline constexpr uint32_t kIoctlRetry = 1u << 2;
inline constexpr uint32_t kIoctl32Bit = 1u << 3;
inline constexpr uint32_t kIoctlDir = 1u << 4;
inline constexpr uint32_t kIoctlCompatX32 = 1u << 5;
inline constexpr uint32_t kIoctlMaxIov = 256;
inline constexpr uint32_t kPollScheduleNotify = 1u << 0;
inline constexpr uint32_t kFsyncFdatasync = 1u << 0;
inline constexpr uint32_t kAttrSubmount = 1u << 0;
inline constexpr uint32_t kAttrDax = 1u << 1;
inline constexpr uint32_t kOpenKillSuidGid = 1u << 0;
inline constexpr uint32_t kSetxattrAclKillSgid = 1u << 0;
inline constexpr uint32_t kExpireOnly = 1u << 0;  ///< fuse_notify_inval_entry_out.flags

/// Request extension types (fuse_ext_header.type); 0..31 are security-context headers.
inline constexpr uint32_t kMaxNrSecctx = 31;
inline constexpr uint32_t kExtGroups = 32;

enum class NotifyCode : int32_t {
  kPoll = 1,
  kInvalInode = 2,
  kInvalEntry = 3,
  kStore = 4,
  kRetrieve = 5,
  kDelete = 6,
  kResend = 7,
  kIncEpoch = 8,
  kPrune = 9,
};

struct EntryOut {
  uint64_t nodeid;
  uint64_t generation;
  uint64_t entry_valid;
  uint64_t attr_valid;
  uint32_t entry_valid_nsec;
  uint32_t attr_valid_nsec;
  Attr attr;
};

struct ForgetIn {
  uint64_t nlookup;
};

struct ForgetOne {
  uint64_t nodeid;
  uint64_t nlookup;
};

struct BatchForgetIn {
  uint32_t count;
  uint32_t dummy;
};

struct GetattrIn {
  uint32_t getattr_flags;
  uint32_t dummy;
  uint64_t fh;
};

struct AttrOut {
  uint64_t attr_valid;
  uint32_t attr_valid_nsec;
  uint32_t dummy;
  Attr attr;
};

struct StatxIn {
  uint32_t getattr_flags;
  uint32_t reserved;
  uint64_t fh;
  uint32_t sx_flags;
  uint32_t sx_mask;
};

struct StatxOut {
  uint64_t attr_valid;
  uint32_t attr_valid_nsec;
  uint32_t flags;
  uint64_t spare[2];
  Statx stat;
};

struct MknodIn {
  uint32_t mode;
  uint32_t rdev;
  uint32_t umask;
  uint32_t padding;
};

struct MkdirIn {
  uint32_t mode;
  uint32_t umask;
};

struct RenameIn {
  uint64_t newdir;
};

struct Rename2In {
  uint64_t newdir;
  uint32_t flags;
  uint32_t padding;
};

struct LinkIn {
  uint64_t oldnodeid;
};

struct SetattrIn {
  uint32_t valid;
  uint32_t padding;
  uint64_t fh;
  uint64_t size;
  uint64_t lock_owner;
  uint64_t atime;
  uint64_t mtime;
  uint64_t ctime;
  uint32_t atimensec;
  uint32_t mtimensec;
  uint32_t ctimensec;
  uint32_t mode;
  uint32_t unused4;
  uint32_t uid;
  uint32_t gid;
  uint32_t unused5;
};

struct OpenIn {
  uint32_t flags;
  uint32_t open_flags;
};

struct CreateIn {
  uint32_t flags;
  uint32_t mode;
  uint32_t umask;
  uint32_t open_flags;
};

struct OpenOut {
  uint64_t fh;
  uint32_t open_flags;
  int32_t backing_id;
};

struct ReleaseIn {
  uint64_t fh;
  uint32_t flags;
  uint32_t release_flags;
  uint64_t lock_owner;
};

struct FlushIn {
  uint64_t fh;
  uint32_t unused;
  uint32_t padding;
  uint64_t lock_owner;
};

struct ReadIn {
  uint64_t fh;
  uint64_t offset;
  uint32_t size;
  uint32_t read_flags;
  uint64_t lock_owner;
  uint32_t flags;
  uint32_t padding;
};

struct WriteIn {
  uint64_t fh;
  uint64_t offset;
  uint32_t size;
  uint32_t write_flags;
  uint64_t lock_owner;
  uint32_t flags;
  uint32_t padding;
};

struct WriteOut {
  uint32_t size;
  uint32_t padding;
};

struct StatfsOut {
  Kstatfs st;
};

struct FsyncIn {
  uint64_t fh;
  uint32_t fsync_flags;
  uint32_t padding;
};

/// Kernels send only the first 8 bytes unless FUSE_SETXATTR_EXT was agreed at INIT.
inline constexpr size_t kCompatSetxattrInSize = 8;

struct SetxattrIn {
  uint32_t size;
  uint32_t flags;
  uint32_t setxattr_flags;
  uint32_t padding;
};

struct GetxattrIn {
  uint32_t size;
  uint32_t padding;
};

struct GetxattrOut {
  uint32_t size;
  uint32_t padding;
};

struct LkIn {
  uint64_t fh;
  uint64_t owner;
  FileLock lk;
  uint32_t lk_flags;
  uint32_t padding;
};

struct LkOut {
  FileLock lk;
};

struct AccessIn {
  uint32_t mask;
  uint32_t padding;
};

/// Kernels before 7.36 send only the first 16 bytes (no flags2).
inline constexpr size_t kCompatInitInSize = 16;

struct InitIn {
  uint32_t major;
  uint32_t minor;
  uint32_t max_readahead;
  uint32_t flags;
  uint32_t flags2;
  uint32_t unused[11];
};

struct InitOut {
  uint32_t major;
  uint32_t minor;
  uint32_t max_readahead;
  uint32_t flags;
  uint16_t max_background;
  uint16_t congestion_threshold;
  uint32_t max_write;
  uint32_t time_gran;
  uint16_t max_pages;
  uint16_t map_alignment;
  uint32_t flags2;
  uint32_t max_stack_depth;
  uint16_t request_timeout;
  uint16_t unused[11];
};

struct CuseInitIn {
  uint32_t major;
  uint32_t minor;
  uint32_t unused;
  uint32_t flags;
};

struct CuseInitOut {
  uint32_t major;
  uint32_t minor;
  uint32_t unused;
  uint32_t flags;
  uint32_t max_read;
  uint32_t max_write;
  uint32_t dev_major;
  uint32_t dev_minor;
  uint32_t spare[10];
};

struct InterruptIn {
  uint64_t unique;
};

struct BmapIn {
  uint64_t block;
  uint32_t blocksize;
  uint32_t padding;
};

struct BmapOut {
  uint64_t block;
};

struct IoctlIn {
  uint64_t fh;
  uint32_t flags;
  uint32_t cmd;
  uint64_t arg;
  uint32_t in_size;
  uint32_t out_size;
};

struct IoctlIovec {
  uint64_t base;
  uint64_t len;
};

struct IoctlOut {
  int32_t result;
  uint32_t flags;
  uint32_t in_iovs;
  uint32_t out_iovs;
};

struct PollIn {
  uint64_t fh;
  uint64_t kh;
  uint32_t flags;
  uint32_t events;
};

struct PollOut {
  uint32_t revents;
  uint32_t padding;
};

struct NotifyPollWakeupOut {
  uint64_t kh;
};

struct FallocateIn {
  uint64_t fh;
  uint64_t offset;
  uint64_t length;
  uint32_t mode;
  uint32_t padding;
};

struct InHeader {
  uint32_t len;
  uint32_t opcode;
  uint64_t unique;
  uint64_t nodeid;
  uint32_t uid;
  uint32_t gid;
  uint32_t pid;
  uint16_t total_extlen;  ///< request extensions, in 8-byte units (7.38; padding before)
  uint16_t padding;
};

struct OutHeader {
  uint32_t len;
  int32_t error;
  uint64_t unique;
};

/// A directory entry is this header, then namelen bytes of name, padded to 8 bytes.
struct Dirent {
  uint64_t ino;
  uint64_t off;
  uint32_t namelen;
  uint32_t type;
};

struct DirentPlus {
  EntryOut entry_out;
  Dirent dirent;
};

inline constexpr size_t kDirentAlignment = 8;

struct NotifyInvalInodeOut {
  uint64_t ino;
  int64_t off;
  int64_t len;
};

struct NotifyInvalEntryOut {
  uint64_t parent;
  uint32_t namelen;
  uint32_t flags;
};

struct NotifyDeleteOut {
  uint64_t parent;
  uint64_t child;
  uint32_t namelen;
  uint32_t padding;
};

struct NotifyStoreOut {
  uint64_t nodeid;
  uint64_t offset;
  uint32_t size;
  uint32_t padding;
};

struct NotifyRetrieveOut {
  uint64_t notify_unique;
  uint64_t nodeid;
  uint64_t offset;
  uint32_t size;
  uint32_t padding;
};

/// The kernel's answer to a RETRIEVE notification (opcode NOTIFY_REPLY); shaped like WriteIn.
struct NotifyRetrieveIn {
  uint64_t dummy1;
  uint64_t offset;
  uint32_t size;
  uint32_t dummy2;
  uint64_t dummy3;
  uint64_t dummy4;
};

struct NotifyPruneOut {
  uint32_t count;
  uint32_t padding;
  uint64_t spare;
};

struct BackingMap {
  int32_t fd;
  uint32_t flags;
  uint64_t padding;
};

/// /dev/fuse ioctls, magic 229: _IOR(229,0,u32), _IOW(229,1,BackingMap), _IOW(229,2,u32),
/// _IO(229,3).
inline constexpr unsigned long kDevIocClone = 0x8004e500ul;
inline constexpr unsigned long kDevIocBackingOpen = 0x4010e501ul;
inline constexpr unsigned long kDevIocBackingClose = 0x4004e502ul;
inline constexpr unsigned long kDevIocSyncInit = 0xe503ul;

struct LseekIn {
  uint64_t fh;
  uint64_t offset;
  uint32_t whence;
  uint32_t padding;
};

struct LseekOut {
  uint64_t offset;
};

struct CopyFileRangeIn {
  uint64_t fh_in;
  uint64_t off_in;
  uint64_t nodeid_out;
  uint64_t fh_out;
  uint64_t off_out;
  uint64_t len;
  uint64_t flags;
};

/// The reply to COPY_FILE_RANGE_64; plain COPY_FILE_RANGE answers with WriteOut.
struct CopyFileRangeOut {
  uint64_t bytes_copied;
};

inline constexpr uint64_t kSetupMappingFlagWrite = 1ull << 0;
inline constexpr uint64_t kSetupMappingFlagRead = 1ull << 1;

struct SetupMappingIn {
  uint64_t fh;
  uint64_t foffset;
  uint64_t len;
  uint64_t flags;
  uint64_t moffset;
};

/// Followed by `count` RemoveMappingOne records. 4 bytes: the only odd-sized argument struct.
struct RemoveMappingIn {
  uint32_t count;
};

struct RemoveMappingOne {
  uint64_t moffset;
  uint64_t len;
};

struct SyncfsIn {
  uint64_t padding;
};

struct Secctx {
  uint32_t size;
  uint32_t padding;
};

struct SecctxHeader {
  uint32_t size;
  uint32_t nr_secctx;
};

/// Shaped like SecctxHeader: a type of 0..31 means "security contexts, that many of them".
struct ExtHeader {
  uint32_t size;  ///< of the whole extension, this header included; a multiple of 8
  uint32_t type;
};

/// Followed by nr_groups u32 group ids.
struct SuppGroups {
  uint32_t nr_groups;
};

/// FUSE-over-io_uring (7.42).
inline constexpr size_t kUringInOutHeaderSize = 128;
inline constexpr size_t kUringOpInOutSize = 128;

struct UringEntInOut {
  uint64_t flags;
  uint64_t commit_id;  ///< the request's unique; echoed by COMMIT_AND_FETCH
  uint32_t payload_sz;
  uint32_t padding;
  uint64_t reserved;
};

struct UringReqHeader {
  unsigned char
      in_out[kUringInOutHeaderSize];       ///< InHeader on the way in, OutHeader on the way out
  unsigned char op_in[kUringOpInOutSize];  ///< the opcode's fixed argument struct
  UringEntInOut ring_ent_in_out;
};

enum class UringCmd : uint32_t {
  kInvalid = 0,
  kRegister = 1,
  kCommitAndFetch = 2,
};

/// Sits in the 80-byte command area of a 128-byte SQE.
struct UringCmdReq {
  uint64_t flags;
  uint64_t commit_id;
  uint16_t qid;
  uint8_t padding[6];
};

/// Layout pins. A failure here means a struct above no longer matches the kernel.
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
RINGFUSE_PIN(CuseInitIn, 16);
RINGFUSE_PIN(CuseInitOut, 72);
RINGFUSE_AT(CuseInitOut, dev_minor, 28);
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
RINGFUSE_PIN(NotifyPollWakeupOut, 8);
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
RINGFUSE_PIN(NotifyInvalInodeOut, 24);
RINGFUSE_AT(NotifyInvalInodeOut, off, 8);
RINGFUSE_AT(NotifyInvalInodeOut, len, 16);
RINGFUSE_PIN(NotifyInvalEntryOut, 16);
RINGFUSE_AT(NotifyInvalEntryOut, namelen, 8);
RINGFUSE_AT(NotifyInvalEntryOut, flags, 12);
RINGFUSE_PIN(NotifyDeleteOut, 24);
RINGFUSE_AT(NotifyDeleteOut, child, 8);
RINGFUSE_AT(NotifyDeleteOut, namelen, 16);
RINGFUSE_PIN(NotifyStoreOut, 24);
RINGFUSE_AT(NotifyStoreOut, offset, 8);
RINGFUSE_AT(NotifyStoreOut, size, 16);
RINGFUSE_PIN(NotifyRetrieveOut, 32);
RINGFUSE_AT(NotifyRetrieveOut, nodeid, 8);
RINGFUSE_AT(NotifyRetrieveOut, offset, 16);
RINGFUSE_AT(NotifyRetrieveOut, size, 24);
RINGFUSE_PIN(NotifyRetrieveIn, 40);
RINGFUSE_AT(NotifyRetrieveIn, offset, 8);
RINGFUSE_AT(NotifyRetrieveIn, size, 16);
RINGFUSE_AT(NotifyRetrieveIn, dummy3, 24);
RINGFUSE_AT(NotifyRetrieveIn, dummy4, 32);
RINGFUSE_PIN(NotifyPruneOut, 16);
RINGFUSE_AT(NotifyPruneOut, padding, 4);
RINGFUSE_AT(NotifyPruneOut, spare, 8);
RINGFUSE_PIN(BackingMap, 16);
RINGFUSE_AT(BackingMap, flags, 4);
RINGFUSE_AT(BackingMap, padding, 8);
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
RINGFUSE_PIN(Secctx, 8);
RINGFUSE_PIN(SecctxHeader, 8);
RINGFUSE_PIN(ExtHeader, 8);
RINGFUSE_AT(ExtHeader, type, 4);
RINGFUSE_PIN(SuppGroups, 4);
RINGFUSE_PIN(UringEntInOut, 32);
RINGFUSE_AT(UringEntInOut, commit_id, 8);
RINGFUSE_AT(UringEntInOut, payload_sz, 16);
RINGFUSE_AT(UringEntInOut, padding, 20);
RINGFUSE_AT(UringEntInOut, reserved, 24);
RINGFUSE_PIN(UringReqHeader, 288);
RINGFUSE_AT(UringReqHeader, op_in, 128);
RINGFUSE_AT(UringReqHeader, ring_ent_in_out, 256);
RINGFUSE_PIN(UringCmdReq, 24);
RINGFUSE_AT(UringCmdReq, commit_id, 8);
RINGFUSE_AT(UringCmdReq, qid, 16);
RINGFUSE_AT(UringCmdReq, padding, 18);
#undef RINGFUSE_PIN
#undef RINGFUSE_AT

}  // namespace ringfuse::wire

RINGFUSE_PUBLIC_END
