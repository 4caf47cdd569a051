// ringfuse/wire.h against the system's <linux/fuse.h> (7.38 on Debian 12): wherever the system
// header defines the same thing, sizes, field offsets and numbers must agree. What is newer than
// the system header is pinned by the static_asserts in wire.h and the golden-byte tests.
#include <gtest/gtest.h>
#include <linux/fuse.h>
#include <linux/ioctl.h>

#include <cstddef>
#include <optional>

#include "ringfuse/opcode.h"
#include "ringfuse/protocol/frames.h"
#include "ringfuse/wire.h"

namespace ringfuse {
namespace {

#define EXPECT_SAME_SIZE(ours, theirs) EXPECT_EQ(sizeof(wire::ours), sizeof(struct theirs))
#define EXPECT_SAME_FIELD(ours, theirs, field) \
  EXPECT_EQ(offsetof(wire::ours, field), offsetof(struct theirs, field)) << #ours "." #field
#define EXPECT_SAME_FIELD_AS(ours, theirs, our_field, their_field)                 \
  EXPECT_EQ(offsetof(wire::ours, our_field), offsetof(struct theirs, their_field)) \
      << #ours "." #our_field

TEST(AbiMatchesSystemHeader, SystemHeaderIsOlderThanOurs) {
  EXPECT_EQ(FUSE_KERNEL_VERSION, wire::kKernelMajor);
  EXPECT_LE(FUSE_KERNEL_MINOR_VERSION, wire::kKernelMinor);
  EXPECT_EQ(FUSE_ROOT_ID, wire::kRootId);
  EXPECT_EQ(FUSE_MIN_READ_BUFFER, wire::kMinReadBuffer);
}

TEST(AbiMatchesSystemHeader, HeadersAgree) {
  EXPECT_SAME_SIZE(InHeader, fuse_in_header);
  EXPECT_SAME_FIELD(InHeader, fuse_in_header, len);
  EXPECT_SAME_FIELD(InHeader, fuse_in_header, opcode);
  EXPECT_SAME_FIELD(InHeader, fuse_in_header, unique);
  EXPECT_SAME_FIELD(InHeader, fuse_in_header, nodeid);
  EXPECT_SAME_FIELD(InHeader, fuse_in_header, uid);
  EXPECT_SAME_FIELD(InHeader, fuse_in_header, gid);
  EXPECT_SAME_FIELD(InHeader, fuse_in_header, pid);
  EXPECT_SAME_FIELD(InHeader, fuse_in_header, total_extlen);
  EXPECT_SAME_SIZE(OutHeader, fuse_out_header);
  EXPECT_SAME_FIELD(OutHeader, fuse_out_header, error);
  EXPECT_SAME_FIELD(OutHeader, fuse_out_header, unique);
}

TEST(AbiMatchesSystemHeader, AttributeStructsAgree) {
  EXPECT_SAME_SIZE(Attr, fuse_attr);
  EXPECT_SAME_FIELD(Attr, fuse_attr, ino);
  EXPECT_SAME_FIELD(Attr, fuse_attr, size);
  EXPECT_SAME_FIELD(Attr, fuse_attr, blocks);
  EXPECT_SAME_FIELD(Attr, fuse_attr, atime);
  EXPECT_SAME_FIELD(Attr, fuse_attr, mtime);
  EXPECT_SAME_FIELD(Attr, fuse_attr, ctime);
  EXPECT_SAME_FIELD(Attr, fuse_attr, atimensec);
  EXPECT_SAME_FIELD(Attr, fuse_attr, mtimensec);
  EXPECT_SAME_FIELD(Attr, fuse_attr, ctimensec);
  EXPECT_SAME_FIELD(Attr, fuse_attr, mode);
  EXPECT_SAME_FIELD(Attr, fuse_attr, nlink);
  EXPECT_SAME_FIELD(Attr, fuse_attr, uid);
  EXPECT_SAME_FIELD(Attr, fuse_attr, gid);
  EXPECT_SAME_FIELD(Attr, fuse_attr, rdev);
  EXPECT_SAME_FIELD(Attr, fuse_attr, blksize);
  EXPECT_SAME_FIELD(Attr, fuse_attr, flags);
  EXPECT_SAME_SIZE(EntryOut, fuse_entry_out);
  EXPECT_SAME_FIELD(EntryOut, fuse_entry_out, generation);
  EXPECT_SAME_FIELD(EntryOut, fuse_entry_out, entry_valid);
  EXPECT_SAME_FIELD(EntryOut, fuse_entry_out, attr_valid);
  EXPECT_SAME_FIELD(EntryOut, fuse_entry_out, entry_valid_nsec);
  EXPECT_SAME_FIELD(EntryOut, fuse_entry_out, attr_valid_nsec);
  EXPECT_SAME_FIELD(EntryOut, fuse_entry_out, attr);
  EXPECT_SAME_SIZE(AttrOut, fuse_attr_out);
  EXPECT_SAME_FIELD(AttrOut, fuse_attr_out, attr_valid_nsec);
  EXPECT_SAME_FIELD(AttrOut, fuse_attr_out, attr);
  EXPECT_SAME_SIZE(GetattrIn, fuse_getattr_in);
  EXPECT_SAME_FIELD(GetattrIn, fuse_getattr_in, fh);
  EXPECT_SAME_SIZE(SetattrIn, fuse_setattr_in);
  EXPECT_SAME_FIELD(SetattrIn, fuse_setattr_in, valid);
  EXPECT_SAME_FIELD(SetattrIn, fuse_setattr_in, fh);
  EXPECT_SAME_FIELD(SetattrIn, fuse_setattr_in, size);
  EXPECT_SAME_FIELD(SetattrIn, fuse_setattr_in, lock_owner);
  EXPECT_SAME_FIELD(SetattrIn, fuse_setattr_in, atime);
  EXPECT_SAME_FIELD(SetattrIn, fuse_setattr_in, mtime);
  EXPECT_SAME_FIELD(SetattrIn, fuse_setattr_in, ctime);
  EXPECT_SAME_FIELD(SetattrIn, fuse_setattr_in, atimensec);
  EXPECT_SAME_FIELD(SetattrIn, fuse_setattr_in, mtimensec);
  EXPECT_SAME_FIELD(SetattrIn, fuse_setattr_in, ctimensec);
  EXPECT_SAME_FIELD(SetattrIn, fuse_setattr_in, mode);
  EXPECT_SAME_FIELD(SetattrIn, fuse_setattr_in, uid);
  EXPECT_SAME_FIELD(SetattrIn, fuse_setattr_in, gid);
  EXPECT_SAME_SIZE(Kstatfs, fuse_kstatfs);
  EXPECT_SAME_FIELD(Kstatfs, fuse_kstatfs, bsize);
  EXPECT_SAME_FIELD(Kstatfs, fuse_kstatfs, namelen);
  EXPECT_SAME_FIELD(Kstatfs, fuse_kstatfs, frsize);
  EXPECT_SAME_FIELD(Kstatfs, fuse_kstatfs, spare);
  EXPECT_SAME_SIZE(StatfsOut, fuse_statfs_out);
}

TEST(AbiMatchesSystemHeader, EntryAndFileStructsAgree) {
  EXPECT_SAME_SIZE(ForgetIn, fuse_forget_in);
  EXPECT_SAME_SIZE(ForgetOne, fuse_forget_one);
  EXPECT_SAME_FIELD(ForgetOne, fuse_forget_one, nlookup);
  EXPECT_SAME_SIZE(BatchForgetIn, fuse_batch_forget_in);
  EXPECT_SAME_SIZE(MknodIn, fuse_mknod_in);
  EXPECT_SAME_FIELD(MknodIn, fuse_mknod_in, rdev);
  EXPECT_SAME_FIELD(MknodIn, fuse_mknod_in, umask);
  EXPECT_SAME_SIZE(MkdirIn, fuse_mkdir_in);
  EXPECT_SAME_FIELD(MkdirIn, fuse_mkdir_in, umask);
  EXPECT_SAME_SIZE(RenameIn, fuse_rename_in);
  EXPECT_SAME_SIZE(Rename2In, fuse_rename2_in);
  EXPECT_SAME_FIELD(Rename2In, fuse_rename2_in, flags);
  EXPECT_SAME_SIZE(LinkIn, fuse_link_in);
  EXPECT_SAME_SIZE(OpenIn, fuse_open_in);
  EXPECT_SAME_FIELD(OpenIn, fuse_open_in, open_flags);
  EXPECT_SAME_SIZE(CreateIn, fuse_create_in);
  EXPECT_SAME_FIELD(CreateIn, fuse_create_in, mode);
  EXPECT_SAME_FIELD(CreateIn, fuse_create_in, umask);
  EXPECT_SAME_FIELD(CreateIn, fuse_create_in, open_flags);
  EXPECT_SAME_SIZE(OpenOut, fuse_open_out);
  EXPECT_SAME_FIELD(OpenOut, fuse_open_out, open_flags);
  EXPECT_SAME_FIELD_AS(OpenOut, fuse_open_out, backing_id, padding);  // renamed in 7.40
  EXPECT_SAME_SIZE(ReleaseIn, fuse_release_in);
  EXPECT_SAME_FIELD(ReleaseIn, fuse_release_in, release_flags);
  EXPECT_SAME_FIELD(ReleaseIn, fuse_release_in, lock_owner);
  EXPECT_SAME_SIZE(FlushIn, fuse_flush_in);
  EXPECT_SAME_FIELD(FlushIn, fuse_flush_in, lock_owner);
  EXPECT_SAME_SIZE(ReadIn, fuse_read_in);
  EXPECT_SAME_FIELD(ReadIn, fuse_read_in, offset);
  EXPECT_SAME_FIELD(ReadIn, fuse_read_in, size);
  EXPECT_SAME_FIELD(ReadIn, fuse_read_in, read_flags);
  EXPECT_SAME_FIELD(ReadIn, fuse_read_in, lock_owner);
  EXPECT_SAME_FIELD(ReadIn, fuse_read_in, flags);
  EXPECT_SAME_SIZE(WriteIn, fuse_write_in);
  EXPECT_SAME_FIELD(WriteIn, fuse_write_in, size);
  EXPECT_SAME_FIELD(WriteIn, fuse_write_in, write_flags);
  EXPECT_SAME_FIELD(WriteIn, fuse_write_in, lock_owner);
  EXPECT_SAME_FIELD(WriteIn, fuse_write_in, flags);
  EXPECT_SAME_SIZE(WriteOut, fuse_write_out);
  EXPECT_SAME_SIZE(FsyncIn, fuse_fsync_in);
  EXPECT_SAME_FIELD(FsyncIn, fuse_fsync_in, fsync_flags);
  EXPECT_SAME_SIZE(SetxattrIn, fuse_setxattr_in);
  EXPECT_SAME_FIELD(SetxattrIn, fuse_setxattr_in, flags);
  EXPECT_SAME_FIELD(SetxattrIn, fuse_setxattr_in, setxattr_flags);
  EXPECT_EQ(wire::kCompatSetxattrInSize, FUSE_COMPAT_SETXATTR_IN_SIZE);
  EXPECT_SAME_SIZE(GetxattrIn, fuse_getxattr_in);
  EXPECT_SAME_SIZE(GetxattrOut, fuse_getxattr_out);
  EXPECT_SAME_SIZE(FileLock, fuse_file_lock);
  EXPECT_SAME_FIELD(FileLock, fuse_file_lock, end);
  EXPECT_SAME_FIELD(FileLock, fuse_file_lock, type);
  EXPECT_SAME_FIELD(FileLock, fuse_file_lock, pid);
  EXPECT_SAME_SIZE(LkIn, fuse_lk_in);
  EXPECT_SAME_FIELD(LkIn, fuse_lk_in, owner);
  EXPECT_SAME_FIELD(LkIn, fuse_lk_in, lk);
  EXPECT_SAME_FIELD(LkIn, fuse_lk_in, lk_flags);
  EXPECT_SAME_SIZE(LkOut, fuse_lk_out);
  EXPECT_SAME_SIZE(AccessIn, fuse_access_in);
  EXPECT_SAME_SIZE(InterruptIn, fuse_interrupt_in);
  EXPECT_SAME_SIZE(BmapIn, fuse_bmap_in);
  EXPECT_SAME_FIELD(BmapIn, fuse_bmap_in, blocksize);
  EXPECT_SAME_SIZE(BmapOut, fuse_bmap_out);
  EXPECT_SAME_SIZE(FallocateIn, fuse_fallocate_in);
  EXPECT_SAME_FIELD(FallocateIn, fuse_fallocate_in, offset);
  EXPECT_SAME_FIELD(FallocateIn, fuse_fallocate_in, length);
  EXPECT_SAME_FIELD(FallocateIn, fuse_fallocate_in, mode);
  EXPECT_SAME_SIZE(LseekIn, fuse_lseek_in);
  EXPECT_SAME_FIELD(LseekIn, fuse_lseek_in, whence);
  EXPECT_SAME_SIZE(LseekOut, fuse_lseek_out);
  EXPECT_SAME_SIZE(CopyFileRangeIn, fuse_copy_file_range_in);
  EXPECT_SAME_FIELD(CopyFileRangeIn, fuse_copy_file_range_in, off_in);
  EXPECT_SAME_FIELD(CopyFileRangeIn, fuse_copy_file_range_in, nodeid_out);
  EXPECT_SAME_FIELD(CopyFileRangeIn, fuse_copy_file_range_in, fh_out);
  EXPECT_SAME_FIELD(CopyFileRangeIn, fuse_copy_file_range_in, off_out);
  EXPECT_SAME_FIELD(CopyFileRangeIn, fuse_copy_file_range_in, len);
  EXPECT_SAME_FIELD(CopyFileRangeIn, fuse_copy_file_range_in, flags);
  EXPECT_SAME_SIZE(SyncfsIn, fuse_syncfs_in);
}

TEST(AbiMatchesSystemHeader, InitStructsAgree) {
  EXPECT_SAME_SIZE(InitIn, fuse_init_in);
  EXPECT_SAME_FIELD(InitIn, fuse_init_in, max_readahead);
  EXPECT_SAME_FIELD(InitIn, fuse_init_in, flags);
  EXPECT_SAME_FIELD(InitIn, fuse_init_in, flags2);
  EXPECT_SAME_SIZE(InitOut, fuse_init_out);
  EXPECT_SAME_FIELD(InitOut, fuse_init_out, max_readahead);
  EXPECT_SAME_FIELD(InitOut, fuse_init_out, flags);
  EXPECT_SAME_FIELD(InitOut, fuse_init_out, max_background);
  EXPECT_SAME_FIELD(InitOut, fuse_init_out, congestion_threshold);
  EXPECT_SAME_FIELD(InitOut, fuse_init_out, max_write);
  EXPECT_SAME_FIELD(InitOut, fuse_init_out, time_gran);
  EXPECT_SAME_FIELD(InitOut, fuse_init_out, max_pages);
  EXPECT_SAME_FIELD(InitOut, fuse_init_out, map_alignment);
  EXPECT_SAME_FIELD(InitOut, fuse_init_out, flags2);
  // 7.40 carved max_stack_depth out of the start of unused[].
  EXPECT_SAME_FIELD_AS(InitOut, fuse_init_out, max_stack_depth, unused);
  EXPECT_SAME_SIZE(CuseInitIn, cuse_init_in);
  EXPECT_SAME_SIZE(CuseInitOut, cuse_init_out);
  EXPECT_SAME_FIELD(CuseInitOut, cuse_init_out, dev_minor);
}

TEST(AbiMatchesSystemHeader, IoctlPollAndDirentStructsAgree) {
  EXPECT_SAME_SIZE(IoctlIn, fuse_ioctl_in);
  EXPECT_SAME_FIELD(IoctlIn, fuse_ioctl_in, cmd);
  EXPECT_SAME_FIELD(IoctlIn, fuse_ioctl_in, arg);
  EXPECT_SAME_FIELD(IoctlIn, fuse_ioctl_in, in_size);
  EXPECT_SAME_FIELD(IoctlIn, fuse_ioctl_in, out_size);
  EXPECT_SAME_SIZE(IoctlIovec, fuse_ioctl_iovec);
  EXPECT_SAME_SIZE(IoctlOut, fuse_ioctl_out);
  EXPECT_SAME_FIELD(IoctlOut, fuse_ioctl_out, in_iovs);
  EXPECT_SAME_FIELD(IoctlOut, fuse_ioctl_out, out_iovs);
  EXPECT_SAME_SIZE(PollIn, fuse_poll_in);
  EXPECT_SAME_FIELD(PollIn, fuse_poll_in, kh);
  EXPECT_SAME_FIELD(PollIn, fuse_poll_in, events);
  EXPECT_SAME_SIZE(PollOut, fuse_poll_out);
  EXPECT_SAME_SIZE(Dirent, fuse_dirent);
  EXPECT_EQ(sizeof(wire::Dirent), FUSE_NAME_OFFSET);
  EXPECT_EQ(sizeof(wire::DirentPlus), FUSE_NAME_OFFSET_DIRENTPLUS);
  EXPECT_SAME_FIELD(Dirent, fuse_dirent, namelen);
  EXPECT_SAME_FIELD(Dirent, fuse_dirent, type);
  EXPECT_SAME_SIZE(SetupMappingIn, fuse_setupmapping_in);
  EXPECT_SAME_FIELD(SetupMappingIn, fuse_setupmapping_in, moffset);
  EXPECT_SAME_SIZE(RemoveMappingIn, fuse_removemapping_in);
  EXPECT_SAME_SIZE(RemoveMappingOne, fuse_removemapping_one);
  EXPECT_SAME_SIZE(Secctx, fuse_secctx);
  EXPECT_SAME_SIZE(SecctxHeader, fuse_secctx_header);
  EXPECT_SAME_SIZE(ExtHeader, fuse_ext_header);
  EXPECT_SAME_FIELD(ExtHeader, fuse_ext_header, type);
}

TEST(AbiMatchesSystemHeader, NotificationStructsAgree) {
  EXPECT_SAME_SIZE(NotifyPollWakeupOut, fuse_notify_poll_wakeup_out);
  EXPECT_SAME_SIZE(NotifyInvalInodeOut, fuse_notify_inval_inode_out);
  EXPECT_SAME_FIELD(NotifyInvalInodeOut, fuse_notify_inval_inode_out, off);
  EXPECT_SAME_FIELD(NotifyInvalInodeOut, fuse_notify_inval_inode_out, len);
  EXPECT_SAME_SIZE(NotifyInvalEntryOut, fuse_notify_inval_entry_out);
  EXPECT_SAME_FIELD(NotifyInvalEntryOut, fuse_notify_inval_entry_out, namelen);
  EXPECT_SAME_FIELD(NotifyInvalEntryOut, fuse_notify_inval_entry_out, flags);
  EXPECT_SAME_SIZE(NotifyDeleteOut, fuse_notify_delete_out);
  EXPECT_SAME_FIELD(NotifyDeleteOut, fuse_notify_delete_out, child);
  EXPECT_SAME_FIELD(NotifyDeleteOut, fuse_notify_delete_out, namelen);
  EXPECT_SAME_SIZE(NotifyStoreOut, fuse_notify_store_out);
  EXPECT_SAME_FIELD(NotifyStoreOut, fuse_notify_store_out, offset);
  EXPECT_SAME_FIELD(NotifyStoreOut, fuse_notify_store_out, size);
  EXPECT_SAME_SIZE(NotifyRetrieveOut, fuse_notify_retrieve_out);
  EXPECT_SAME_FIELD(NotifyRetrieveOut, fuse_notify_retrieve_out, nodeid);
  EXPECT_SAME_FIELD(NotifyRetrieveOut, fuse_notify_retrieve_out, offset);
  EXPECT_SAME_FIELD(NotifyRetrieveOut, fuse_notify_retrieve_out, size);
  EXPECT_SAME_SIZE(NotifyRetrieveIn, fuse_notify_retrieve_in);
  EXPECT_SAME_FIELD(NotifyRetrieveIn, fuse_notify_retrieve_in, offset);
  EXPECT_SAME_FIELD(NotifyRetrieveIn, fuse_notify_retrieve_in, size);
}

TEST(AbiMatchesSystemHeader, NumbersAgree) {
  for (uint32_t number = 1; number <= FUSE_TMPFILE; ++number) {
    EXPECT_EQ(LookupOpcode(number).has_value(), number != 7 && number != 19) << number;
  }
  EXPECT_EQ(static_cast<uint32_t>(Opcode::kLookup), FUSE_LOOKUP);
  EXPECT_EQ(static_cast<uint32_t>(Opcode::kNotifyReply), FUSE_NOTIFY_REPLY);
  EXPECT_EQ(static_cast<uint32_t>(Opcode::kBatchForget), FUSE_BATCH_FORGET);
  EXPECT_EQ(static_cast<uint32_t>(Opcode::kReaddirplus), FUSE_READDIRPLUS);
  EXPECT_EQ(static_cast<uint32_t>(Opcode::kCopyFileRange), FUSE_COPY_FILE_RANGE);
  EXPECT_EQ(static_cast<uint32_t>(Opcode::kSyncfs), FUSE_SYNCFS);
  EXPECT_EQ(static_cast<uint32_t>(Opcode::kTmpfile), FUSE_TMPFILE);
  EXPECT_EQ(static_cast<int32_t>(wire::NotifyCode::kPoll), FUSE_NOTIFY_POLL);
  EXPECT_EQ(static_cast<int32_t>(wire::NotifyCode::kInvalInode), FUSE_NOTIFY_INVAL_INODE);
  EXPECT_EQ(static_cast<int32_t>(wire::NotifyCode::kInvalEntry), FUSE_NOTIFY_INVAL_ENTRY);
  EXPECT_EQ(static_cast<int32_t>(wire::NotifyCode::kStore), FUSE_NOTIFY_STORE);
  EXPECT_EQ(static_cast<int32_t>(wire::NotifyCode::kRetrieve), FUSE_NOTIFY_RETRIEVE);
  EXPECT_EQ(static_cast<int32_t>(wire::NotifyCode::kDelete), FUSE_NOTIFY_DELETE);
  EXPECT_EQ(wire::kDevIocClone, FUSE_DEV_IOC_CLONE);
  EXPECT_EQ(wire::kExpireOnly, FUSE_EXPIRE_ONLY);
  EXPECT_EQ(wire::kMaxNrSecctx, FUSE_MAX_NR_SECCTX);
  EXPECT_EQ(wire::kFattrKillSuidGid, FATTR_KILL_SUIDGID);
  EXPECT_EQ(wire::kFopenParallelDirectWrites, FOPEN_PARALLEL_DIRECT_WRITES);
  EXPECT_EQ(wire::init_flag::kInitExt, FUSE_INIT_EXT);
  EXPECT_EQ(wire::init_flag::kSecurityCtx, FUSE_SECURITY_CTX);
  EXPECT_EQ(wire::init_flag::kHasInodeDax, FUSE_HAS_INODE_DAX);
  EXPECT_EQ(wire::init_flag::kHasExpireOnly, FUSE_HAS_EXPIRE_ONLY);
  EXPECT_EQ(wire::init_flag::kSetxattrExt, FUSE_SETXATTR_EXT);
  EXPECT_EQ(wire::init_flag::kMaxPages, FUSE_MAX_PAGES);
  EXPECT_EQ(wire::init_flag::kCacheSymlinks, FUSE_CACHE_SYMLINKS);
  EXPECT_EQ(wire::init_flag::kHandleKillprivV2, FUSE_HANDLE_KILLPRIV_V2);
}

// Every opcode the system header defines existed by its minor: the list's `since` is no later.
TEST(AbiMatchesSystemHeader, OpcodesOfTheSystemHeaderAreNoNewerThanItsMinor) {
  for (uint32_t number = 1; number <= FUSE_TMPFILE; ++number) {
    const std::optional<OpcodeInfo> info = LookupOpcode(number);
    if (info) {
      EXPECT_LE(info->since_minor, uint32_t{FUSE_KERNEL_MINOR_VERSION}) << info->name;
    }
  }
}

TEST(AbiMatchesSystemHeader, IoctlNumbersFollowTheKernelsEncoding) {
  // The system header has only CLONE; the rest are derived the way <asm/ioctl.h> encodes them.
  EXPECT_EQ(wire::kDevIocBackingOpen, _IOW(229, 1, wire::BackingMap));
  EXPECT_EQ(wire::kDevIocBackingClose, _IOW(229, 2, uint32_t));
  EXPECT_EQ(wire::kDevIocSyncInit, _IO(229, 3));
}

}  // namespace
}  // namespace ringfuse
