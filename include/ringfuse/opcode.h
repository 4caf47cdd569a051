/// @file
/// The FUSE opcodes and their table, both generated from the one list in opcode_list.h. The
/// parser reads the list itself at compile time, and OpcodeInfo for where the fixed struct is and
/// how long; the dispatcher, the transports and the printers read it for names and whether to
/// answer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "ringfuse/export.h"
#include "ringfuse/opcode_list.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// A FUSE request's opcode, generated from RINGFUSE_FOR_EACH_OPCODE (opcode_list.h).
enum class Opcode : uint32_t {
#define RINGFUSE_ENUMERATOR(name, number, ...) k##name = number,
  RINGFUSE_FOR_EACH_OPCODE(RINGFUSE_ENUMERATOR)
#undef RINGFUSE_ENUMERATOR
};

/// The highest opcode number the library knows.
inline constexpr uint32_t kMaxOpcode = std::max({
#define RINGFUSE_NUMBER(name, number, ...) uint32_t{number},
    RINGFUSE_FOR_EACH_OPCODE(RINGFUSE_NUMBER)
#undef RINGFUSE_NUMBER
});

/// What follows an opcode's fixed argument struct; which opcode has which is the `tail` column of
/// RINGFUSE_FOR_EACH_OPCODE.
enum class Tail : uint8_t {
  kNone,         ///< nothing: the message is exactly header + fixed struct
  kNames,        ///< `names` NUL-terminated strings
  kData,         ///< raw bytes whose length the fixed struct gives
  kNameAndData,  ///< one NUL-terminated name, then raw bytes whose length the fixed struct gives
  kRecords,      ///< an array of records whose count the fixed struct gives
};

/// One opcode's row of the table, its columns of RINGFUSE_FOR_EACH_OPCODE at run time.
struct OpcodeInfo {
  Opcode opcode;          ///< the opcode this row describes
  std::string_view name;  ///< as the kernel spells it, without the FUSE_ prefix
  uint32_t fixed_size;    ///< bytes of the fixed argument struct at the current protocol
  uint8_t names;          ///< NUL-terminated strings after the fixed struct
  Tail tail;              ///< what follows the fixed struct
  bool replies;           ///< false: the kernel expects no answer (the list's reply is NoReply)
  /// First protocol minor that has the opcode; information only: the kernel sends no opcode newer
  /// than the minor it negotiated, and the library does not check.
  uint32_t since_minor;
  /// The kernel sends an empty first argument ahead of the fixed struct (fuse_set_zero_arg0), so
  /// FUSE-over-io_uring leaves op_in untouched and puts the struct at the start of the payload.
  bool fixed_in_ring_payload = false;
};

/// The row for a wire opcode, or nothing for a number that is not a FUSE opcode.
std::optional<OpcodeInfo> LookupOpcode(uint32_t opcode);

/// The kernel's name for an opcode ("LOOKUP"), or "UNKNOWN" for a number with no row.
std::string_view OpcodeName(uint32_t opcode);

/// Checks the table against itself (ascending, unique, names present, no opcode newer than the
/// ABI, `names` agreeing with the tail); the library's build asserts it, tests and the self-check
/// tool report it. Returns the first inconsistency found, or an empty string.
std::string_view OpcodeTableProblem();

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
