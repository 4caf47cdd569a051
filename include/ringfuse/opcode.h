// The FUSE opcodes and the one table that describes them.
//
// The parser, the dispatcher and the debug printer all read OpcodeInfo; nothing else lists opcodes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "ringfuse/export.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

enum class Opcode : uint32_t {
  kLookup = 1,
  kForget = 2,
  kGetattr = 3,
  kSetattr = 4,
  kReadlink = 5,
  kSymlink = 6,
  kMknod = 8,
  kMkdir = 9,
  kUnlink = 10,
  kRmdir = 11,
  kRename = 12,
  kLink = 13,
  kOpen = 14,
  kRead = 15,
  kWrite = 16,
  kStatfs = 17,
  kRelease = 18,
  kFsync = 20,
  kSetxattr = 21,
  kGetxattr = 22,
  kListxattr = 23,
  kRemovexattr = 24,
  kFlush = 25,
  kInit = 26,
  kOpendir = 27,
  kReaddir = 28,
  kReleasedir = 29,
  kFsyncdir = 30,
  kGetlk = 31,
  kSetlk = 32,
  kSetlkw = 33,
  kAccess = 34,
  kCreate = 35,
  kInterrupt = 36,
  kBmap = 37,
  kDestroy = 38,
  kIoctl = 39,
  kPoll = 40,
  kNotifyReply = 41,
  kBatchForget = 42,
  kFallocate = 43,
  kReaddirplus = 44,
  kRename2 = 45,
  kLseek = 46,
  kCopyFileRange = 47,
  kSetupMapping = 48,
  kRemoveMapping = 49,
  kSyncfs = 50,
  kTmpfile = 51,
  kStatx = 52,
  kCopyFileRange64 = 53,
};

inline constexpr uint32_t kMaxOpcode = 53;

// What follows an opcode's fixed argument struct.
enum class Tail : uint8_t {
  kNone,         // nothing: the message is exactly header + fixed struct
  kNames,        // `names` NUL-terminated strings
  kData,         // raw bytes whose length the fixed struct gives (WRITE, IOCTL, NOTIFY_REPLY)
  kNameAndData,  // one NUL-terminated name, then raw bytes (SETXATTR)
  kRecords,      // an array of records whose count the fixed struct gives (BATCH_FORGET, ...)
};

struct OpcodeInfo {
  Opcode opcode;
  std::string_view name;  // as the kernel spells it, without the FUSE_ prefix
  uint32_t fixed_size;    // bytes of the fixed argument struct at the current protocol
  uint8_t names;          // NUL-terminated strings after the fixed struct
  Tail tail;
  bool replies;          // false: the kernel expects no answer (FORGET, INTERRUPT, ...)
  uint32_t since_minor;  // first protocol minor that has the opcode
  // The kernel sends an empty first argument ahead of the fixed struct (fuse_set_zero_arg0), so
  // FUSE-over-io_uring leaves op_in untouched and puts the struct at the start of the payload.
  bool fixed_in_ring_payload = false;
};

// The row for a wire opcode, or nothing for a number that is not a FUSE opcode.
std::optional<OpcodeInfo> LookupOpcode(uint32_t opcode);

// The kernel's name for an opcode ("LOOKUP"), or "UNKNOWN" for a number with no row.
std::string_view OpcodeName(uint32_t opcode);

// Checks the table against itself (ascending, unique, names present); used by tests and the
// self-check tool. Returns the first inconsistency found, or an empty string.
std::string_view OpcodeTableProblem();

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
