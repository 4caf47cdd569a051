#include "ringfuse/opcode.h"

#include <array>
#include <type_traits>

#include "ringfuse/reply.h"
#include "ringfuse/wire.h"

namespace ringfuse {
namespace {

using wire::kKernelMinor;

// The list's fixed structs, named as ringfuse::wire names them, and None.
namespace fixed {
using namespace wire;  // NOLINT(google-build-using-namespace): the list's bare struct names
struct None {};
template <typename T>
constexpr uint32_t kSize = sizeof(T);
template <>
constexpr uint32_t kSize<None> = 0;
}  // namespace fixed

constexpr OpcodeInfo kRows[] = {
#define RINGFUSE_ROW(enumerator, number, kernel_name, op_struct, reply, fixed_struct, name_count, \
                     tail_kind, first_minor, in_payload)                                          \
  {.opcode = Opcode::k##enumerator,                                                               \
   .name = #kernel_name,                                                                          \
   .fixed_size = fixed::kSize<fixed::fixed_struct>,                                               \
   .names = name_count,                                                                           \
   .tail = Tail::k##tail_kind,                                                                    \
   .replies = !std::is_same_v<reply, NoReply>,                                                    \
   .since_minor = first_minor,                                                                    \
   .fixed_in_ring_payload = in_payload},
    RINGFUSE_FOR_EACH_OPCODE(RINGFUSE_ROW)
#undef RINGFUSE_ROW
};

constexpr std::string_view TableProblem() {
  uint32_t previous = 0;
  for (const OpcodeInfo& row : kRows) {
    const uint32_t number = static_cast<uint32_t>(row.opcode);
    if (number <= previous) return "opcode rows are not strictly ascending";
    if (row.name.empty()) return "an opcode row has no name";
    if (row.since_minor > kKernelMinor) return "an opcode row is newer than the ABI";
    if ((row.tail == Tail::kNames) != (row.names > 0 && row.tail != Tail::kNameAndData) ||
        (row.tail == Tail::kNameAndData && row.names != 1)) {
      return "an opcode row's names and tail disagree";
    }
    previous = number;
  }
  if (previous != kMaxOpcode) return "the last opcode row is not kMaxOpcode";
  return {};
}

static_assert(TableProblem().empty(), "RINGFUSE_FOR_EACH_OPCODE is inconsistent");

// Direct index by wire opcode; holes (0, 7, 19) stay empty.
constexpr std::array<std::optional<OpcodeInfo>, kMaxOpcode + 1> BuildIndex() {
  std::array<std::optional<OpcodeInfo>, kMaxOpcode + 1> index{};
  for (const OpcodeInfo& row : kRows) index[static_cast<uint32_t>(row.opcode)] = row;
  return index;
}

constexpr auto kIndex = BuildIndex();

}  // namespace

std::optional<OpcodeInfo> LookupOpcode(uint32_t opcode) {
  if (opcode > kMaxOpcode) return std::nullopt;
  return kIndex[opcode];
}

std::string_view OpcodeName(uint32_t opcode) {
  const std::optional<OpcodeInfo> info = LookupOpcode(opcode);
  return info ? info->name : "UNKNOWN";
}

std::string_view OpcodeTableProblem() { return TableProblem(); }

}  // namespace ringfuse
