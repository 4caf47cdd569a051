#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ringfuse/opcode.h"
#include "ringfuse/protocol/parse.h"
#include "ringfuse/wire.h"
#include "tests/protocol/wire.h"

namespace ringfuse {
namespace {

using testing::HeaderFields;
using testing::RequestMessage;
using testing::Wire;

TEST(OpcodeTable, IsConsistent) { EXPECT_EQ(OpcodeTableProblem(), ""); }

TEST(OpcodeTable, CoversEveryOpcodeFrom1To53ExceptTheKernelsHoles) {
  for (uint32_t number = 1; number <= kMaxOpcode; ++number) {
    const bool hole = number == 7 || number == 19;
    EXPECT_EQ(LookupOpcode(number).has_value(), !hole) << number;
  }
  EXPECT_FALSE(LookupOpcode(0).has_value());
  EXPECT_FALSE(LookupOpcode(54).has_value());
  EXPECT_FALSE(LookupOpcode(4096).has_value());  // CUSE_INIT is not a FUSE request
}

TEST(OpcodeTable, KnowsTheNewestOpcodes) {
  EXPECT_EQ(OpcodeName(50), "SYNCFS");
  EXPECT_EQ(OpcodeName(51), "TMPFILE");
  EXPECT_EQ(OpcodeName(52), "STATX");
  EXPECT_EQ(OpcodeName(53), "COPY_FILE_RANGE_64");
  EXPECT_EQ(OpcodeName(7), "UNKNOWN");
}

TEST(OpcodeTable, MarksTheOperationsTheKernelExpectsNoAnswerTo) {
  for (uint32_t number : {2u, 36u, 41u, 42u}) {
    EXPECT_FALSE(LookupOpcode(number)->replies) << OpcodeName(number);
  }
  EXPECT_TRUE(LookupOpcode(1)->replies);
}

// The `since` column where it matters: a kernel of the oldest minor ringfuse supports may not
// send these, as the kernel's changelog (include/uapi/linux/fuse.h) has them.
TEST(OpcodeTable, SinceNamesTheOpcodesNewerThanTheOldestSupportedMinor) {
  std::vector<std::pair<std::string_view, uint32_t>> newer;
  for (uint32_t number = 1; number <= kMaxOpcode; ++number) {
    const std::optional<OpcodeInfo> info = LookupOpcode(number);
    if (info && info->since_minor > wire::kOldestSupportedMinor) {
      newer.emplace_back(info->name, info->since_minor);
    }
  }
  const std::vector<std::pair<std::string_view, uint32_t>> expected = {
      {"SYNCFS", 34}, {"TMPFILE", 37}, {"STATX", 39}, {"COPY_FILE_RANGE_64", 45}};
  EXPECT_EQ(newer, expected);
}

// The parser against the table at run time, row by row: it reads exactly the row's `names`
// names, and the tail only where the row has one. (The parser is generated from the same list,
// and a row its per-opcode code disagrees with does not compile; this checks the generic reader.)
class EveryRow : public ::testing::TestWithParam<uint32_t> {
 protected:
  OpcodeInfo Row() const { return *LookupOpcode(GetParam()); }

  // The row's fixed struct filled with `fill`, then `names` one-letter names, then `extra`.
  std::vector<std::byte> Message(uint8_t fill, uint32_t names, std::string_view extra = {}) const {
    Wire body;
    for (uint32_t i = 0; i < Row().fixed_size; ++i) body.U8(fill);
    for (uint32_t i = 0; i < names; ++i) body.CString("n");
    body.Text(extra);
    return RequestMessage(HeaderFields{.opcode = GetParam(), .unique = 7}, body);
  }

  static std::optional<ParseError> ErrorOf(const std::vector<std::byte>& message) {
    const ParseResult result = ParseRequest(message, ParseContext{});
    if (const auto* error = std::get_if<ParseError>(&result)) return *error;
    return std::nullopt;
  }
};

std::vector<uint32_t> Rows() {
  std::vector<uint32_t> rows;
  for (uint32_t number = 1; number <= kMaxOpcode; ++number) {
    if (LookupOpcode(number)) rows.push_back(number);
  }
  return rows;
}

TEST_P(EveryRow, ParsesWithItsNamesAndAZeroLengthTail) {
  // Every size and count in a zeroed fixed struct is 0: the tail, if any, is empty.
  const std::optional<ParseError> error = ErrorOf(Message(0, Row().names));
  EXPECT_FALSE(error) << error->ToString();
}

TEST_P(EveryRow, ReadsNoMoreNamesThanItsRowHas) {
  // An unterminated string after the listed names would be a name without NUL if it were read.
  const std::optional<ParseError> error = ErrorOf(Message(0, Row().names, "x"));
  EXPECT_FALSE(error) << error->ToString();
}

TEST_P(EveryRow, NeedsEveryNameItsRowHas) {
  for (uint32_t present = 0; present < Row().names; ++present) {
    const std::optional<ParseError> error = ErrorOf(Message(0, present));
    ASSERT_TRUE(error) << present << " of " << int{Row().names} << " names parsed";
    EXPECT_EQ(error->kind, ParseErrorKind::kTruncatedArgument);
  }
}

TEST_P(EveryRow, ReadsATailOnlyWhereItsRowHasOne) {
  // All ones in the fixed struct announce a tail far longer than the message.
  const std::optional<ParseError> error = ErrorOf(Message(0xff, Row().names));
  const bool has_tail =
      Row().tail == Tail::kData || Row().tail == Tail::kNameAndData || Row().tail == Tail::kRecords;
  if (has_tail) {
    ASSERT_TRUE(error) << "a tail the fixed struct announces was not read";
    EXPECT_EQ(error->kind, ParseErrorKind::kTruncatedArgument);
  } else {
    // A row may refuse the reply size it asks for, but none reads past its names.
    EXPECT_TRUE(!error || error->kind != ParseErrorKind::kTruncatedArgument) << error->ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(OpcodeTable, EveryRow, ::testing::ValuesIn(Rows()),
                         [](const ::testing::TestParamInfo<uint32_t>& row) {
                           return std::string(OpcodeName(row.param));
                         });

}  // namespace
}  // namespace ringfuse
