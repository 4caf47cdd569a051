/// \file
/// The wire structs a filesystem never handles, for custom transports and protocol tools: request
/// extensions, notification payloads, the /dev/fuse ioctls, FUSE-over-io_uring's ring entries and
/// CUSE's INIT. ringfuse/wire.h has the rest; ringfuse/ringfuse.h does not include this header.
///
/// Like wire.h: the kernel's layout, pinned by the static_asserts below and cross-checked against
/// the system header by tests/protocol/abi_matches_system_header_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ringfuse/export.h"
#include "ringfuse/wire.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse::wire {

/// \name Request extension types
/// Request extension types (fuse_ext_header.type); 0..31 are security-context headers.
//@{
/// the largest type that is a count of security contexts
inline constexpr uint32_t kMaxNrSecctx = 31;
inline constexpr uint32_t kExtGroups = 32;  ///< supplementary groups (SuppGroups)
//@}

/// fuse_secctx: one security context, followed by its name and value.
struct Secctx {
  uint32_t size;     ///< bytes of the value
  uint32_t padding;  ///< unused
};

/// fuse_secctx_header: the security-context extension, followed by nr_secctx contexts.
struct SecctxHeader {
  uint32_t size;       ///< bytes of the whole extension
  uint32_t nr_secctx;  ///< contexts that follow
};

/// Shaped like SecctxHeader: a type of 0..31 means "security contexts, that many of them".
struct ExtHeader {
  uint32_t size;  ///< of the whole extension, this header included; a multiple of 8
  uint32_t type;  ///< kExtGroups, or a security-context count
};

/// Followed by nr_groups u32 group ids.
struct SuppGroups {
  uint32_t nr_groups;  ///< group ids that follow
};

/// fuse_notify_poll_wakeup_out: the POLL notification.
struct NotifyPollWakeupOut {
  uint64_t kh;  ///< kernel handle from PollIn
};

/// fuse_notify_inval_inode_out: INVAL_INODE's payload.
struct NotifyInvalInodeOut {
  uint64_t ino;  ///< node id
  int64_t off;   ///< first byte to drop; negative: attributes only
  int64_t len;   ///< bytes to drop; 0 or less: to the end
};

/// fuse_notify_inval_entry_out: INVAL_ENTRY's payload, followed by the name.
struct NotifyInvalEntryOut {
  uint64_t parent;   ///< directory node id
  uint32_t namelen;  ///< bytes of the name
  uint32_t flags;    ///< kExpireOnly
};

/// fuse_notify_delete_out: DELETE's payload, followed by the name.
struct NotifyDeleteOut {
  uint64_t parent;   ///< directory node id
  uint64_t child;    ///< node id of the deleted entry
  uint32_t namelen;  ///< bytes of the name
  uint32_t padding;  ///< unused
};

/// fuse_notify_store_out: STORE's payload, followed by the data.
struct NotifyStoreOut {
  uint64_t nodeid;   ///< node id
  uint64_t offset;   ///< where the data goes
  uint32_t size;     ///< bytes of data
  uint32_t padding;  ///< unused
};

/// fuse_notify_prune_out: PRUNE's payload, followed by `count` node ids.
struct NotifyPruneOut {
  uint32_t count;    ///< node ids that follow
  uint32_t padding;  ///< unused
  uint64_t spare;    ///< unused
};

/// fuse_backing_map: kDevIocBackingOpen's argument.
struct BackingMap {
  int32_t fd;        ///< the backing file's fd
  uint32_t flags;    ///< unused, 0
  uint64_t padding;  ///< unused
};

/// \name /dev/fuse ioctls
/// /dev/fuse ioctls, magic 229: _IOR(229,0,u32), _IOW(229,1,BackingMap), _IOW(229,2,u32),
/// _IO(229,3).
//@{
/// FUSE_DEV_IOC_CLONE: attach this fd to the connection of the fd given
inline constexpr unsigned long kDevIocClone = 0x8004e500ul;
/// FUSE_DEV_IOC_BACKING_OPEN: register a backing file; returns its id
inline constexpr unsigned long kDevIocBackingOpen = 0x4010e501ul;
/// FUSE_DEV_IOC_BACKING_CLOSE: unregister a backing id
inline constexpr unsigned long kDevIocBackingClose = 0x4004e502ul;
/// FUSE_DEV_IOC_SYNC_INIT: mount() waits for INIT's answer
inline constexpr unsigned long kDevIocSyncInit = 0xe503ul;
//@}

/// \name FUSE-over-io_uring (7.42).
//@{
/// bytes of the header area of a ring entry's header
inline constexpr size_t kUringInOutHeaderSize = 128;
/// bytes of the argument area of a ring entry's header
inline constexpr size_t kUringOpInOutSize = 128;
//@}

/// fuse_uring_ent_in_out: a ring entry's bookkeeping.
struct UringEntInOut {
  uint64_t flags;       ///< unused
  uint64_t commit_id;   ///< the request's unique; echoed by COMMIT_AND_FETCH
  uint32_t payload_sz;  ///< bytes of payload
  uint32_t padding;     ///< unused
  uint64_t reserved;    ///< unused
};

/// fuse_uring_req_header: the header area of a FUSE-over-io_uring ring entry.
struct UringReqHeader {
  /// InHeader on the way in, OutHeader on the way out
  unsigned char in_out[kUringInOutHeaderSize];
  unsigned char op_in[kUringOpInOutSize];  ///< the opcode's fixed argument struct
  UringEntInOut ring_ent_in_out;           ///< the entry's bookkeeping
};

/// fuse_uring_cmd: the io_uring commands on /dev/fuse.
enum class UringCmd : uint32_t {
  kInvalid = 0,         ///< never sent
  kRegister = 1,        ///< register an entry; it receives a request
  kCommitAndFetch = 2,  ///< send an entry's reply and wait for the next request
};

/// Sits in the 80-byte command area of a 128-byte SQE.
struct UringCmdReq {
  uint64_t flags;      ///< unused
  uint64_t commit_id;  ///< unique of the request answered (COMMIT_AND_FETCH)
  uint16_t qid;        ///< the queue, one per CPU
  uint8_t padding[6];  ///< unused
};

/// cuse_init_in: CUSE's INIT offer.
struct CuseInitIn {
  uint32_t major;   ///< protocol major
  uint32_t minor;   ///< protocol minor
  uint32_t unused;  ///< unused
  uint32_t flags;   ///< CUSE INIT flags
};

/// cuse_init_out: CUSE's INIT answer.
struct CuseInitOut {
  uint32_t major;      ///< protocol major
  uint32_t minor;      ///< protocol minor
  uint32_t unused;     ///< unused
  uint32_t flags;      ///< CUSE INIT flags
  uint32_t max_read;   ///< largest read, bytes
  uint32_t max_write;  ///< largest write, bytes
  uint32_t dev_major;  ///< character device's major
  uint32_t dev_minor;  ///< character device's minor
  uint32_t spare[10];  ///< unused
};

// Layout pins. A failure here means a struct above no longer matches the kernel.
#define RINGFUSE_PIN(T, size) static_assert(sizeof(T) == (size), #T " size")
#define RINGFUSE_AT(T, field, off) static_assert(offsetof(T, field) == (off), #T "." #field)
RINGFUSE_PIN(CuseInitIn, 16);
RINGFUSE_PIN(CuseInitOut, 72);
RINGFUSE_AT(CuseInitOut, dev_minor, 28);
RINGFUSE_PIN(NotifyPollWakeupOut, 8);
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
RINGFUSE_PIN(NotifyPruneOut, 16);
RINGFUSE_AT(NotifyPruneOut, padding, 4);
RINGFUSE_AT(NotifyPruneOut, spare, 8);
RINGFUSE_PIN(BackingMap, 16);
RINGFUSE_AT(BackingMap, flags, 4);
RINGFUSE_AT(BackingMap, padding, 8);
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
