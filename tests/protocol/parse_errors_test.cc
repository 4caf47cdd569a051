// Each ParseErrorKind, produced by the smallest message that should produce it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <variant>
#include <vector>

#include "ringfuse/protocol/parse.h"
#include "ringfuse/request.h"
#include "tests/protocol/wire.h"

namespace ringfuse {
namespace {

using ::testing::HasSubstr;
using testing::HeaderFields;
using testing::RequestMessage;
using testing::Wire;

constexpr uint64_t kUnique = 0xabcdef0123;

std::vector<std::byte> Message(uint32_t opcode, const Wire& body, uint16_t total_extlen = 0) {
  return RequestMessage(HeaderFields{opcode, kUnique, 1, 1000, 1000, 42, total_extlen}, body);
}

// The ParseError for `message`, or a failed test and a default error when it parsed.
ParseError ErrorOf(const std::vector<std::byte>& message, const ParseContext& context = {}) {
  const ParseResult result = ParseRequest(message, context);
  if (!std::holds_alternative<ParseError>(result)) {
    ADD_FAILURE() << "parsed OK, expected an error";
    return ParseError{ParseErrorKind::kShortHeader, 0, std::nullopt, {}};
  }
  return std::get<ParseError>(result);
}

bool Parses(const std::vector<std::byte>& message, const ParseContext& context = {}) {
  const ParseResult result = ParseRequest(message, context);
  if (const auto* error = std::get_if<ParseError>(&result)) {
    ADD_FAILURE() << error->ToString();
    return false;
  }
  return true;
}

std::vector<std::byte> Lookup(size_t name_length) {
  return Message(1, Wire().CString(std::string(name_length, 'n')));
}

TEST(ParseErrors, FewerThan40BytesIsAShortHeader) {
  const std::vector<std::byte> whole = Message(3, Wire().U32(0).U32(0).U64(0));
  for (size_t size : {0, 1, 4, 15, 16, 24, 39}) {
    const std::vector<std::byte> cut(whole.begin(), whole.begin() + size);
    EXPECT_EQ(ErrorOf(cut).kind, ParseErrorKind::kShortHeader) << size;
  }
}

TEST(ParseErrors, ShortHeaderOf16To39BytesStillYieldsUniqueAndOpcode) {
  const std::vector<std::byte> whole = Message(3, Wire().U32(0).U32(0).U64(0));
  for (size_t size = 16; size < 40; ++size) {
    const ParseError error = ErrorOf({whole.begin(), whole.begin() + size});
    EXPECT_EQ(error.unique, kUnique) << size;
    EXPECT_EQ(error.opcode, 3u) << size;
  }
}

TEST(ParseErrors, ShortHeaderOfFewerThan16BytesHasNoUnique) {
  const std::vector<std::byte> whole = Message(3, Wire());
  for (size_t size = 0; size < 16; ++size) {
    const ParseError error = ErrorOf({whole.begin(), whole.begin() + size});
    EXPECT_FALSE(error.unique.has_value()) << size;
    EXPECT_EQ(error.opcode, 0u) << size;
  }
}

void SetLen(std::vector<std::byte>& message, uint32_t len) {
  for (size_t i = 0; i < 4; ++i) message[i] = static_cast<std::byte>((len >> (8 * i)) & 0xff);
}

TEST(ParseErrors, LenLargerThanTheBufferIsALengthMismatch) {
  std::vector<std::byte> message = Message(17, Wire());
  for (uint32_t len : {41u, 4096u, 0xffffffffu}) {
    SetLen(message, len);
    const ParseError error = ErrorOf(message);
    EXPECT_EQ(error.kind, ParseErrorKind::kLengthMismatch) << len;
    EXPECT_EQ(error.unique, kUnique);
    EXPECT_EQ(error.opcode, 17u);
  }
}

TEST(ParseErrors, LenSmallerThanTheBufferIsALengthMismatch) {
  std::vector<std::byte> message = Message(3, Wire().U32(0).U32(0).U64(0));
  for (uint32_t len : {0u, 39u, 40u, 55u}) {
    SetLen(message, len);
    EXPECT_EQ(ErrorOf(message).kind, ParseErrorKind::kLengthMismatch) << len;
  }
}

TEST(ParseErrors, NumbersThatAreNotOpcodesAreUnknownWithTheirUnique) {
  for (uint32_t opcode : {0u, 7u, 19u, 54u, 4096u}) {
    const ParseError error = ErrorOf(Message(opcode, Wire().U64(0)));
    EXPECT_EQ(error.kind, ParseErrorKind::kUnknownOpcode) << opcode;
    EXPECT_EQ(error.unique, kUnique) << opcode;
    EXPECT_EQ(error.opcode, opcode);
  }
}

TEST(ParseErrors, AFixedStructOneByteShortIsATruncatedArgument) {
  const ParseError error = ErrorOf(Message(3, Wire().U32(0).U32(0).Zeros(7)));
  EXPECT_EQ(error.kind, ParseErrorKind::kTruncatedArgument);
  EXPECT_EQ(error.unique, kUnique);
  EXPECT_EQ(error.argument, "fixed argument");
}

TEST(ParseErrors, WriteDataShorterThanItsSizeIsATruncatedArgument) {
  const Wire write_in = Wire().U64(1).U64(0).U32(10).U32(0).U64(0).U32(0).U32(0);
  EXPECT_TRUE(Parses(Message(16, Wire(write_in).Zeros(10))));
  const ParseError error = ErrorOf(Message(16, Wire(write_in).Zeros(9)));
  EXPECT_EQ(error.kind, ParseErrorKind::kTruncatedArgument);
  EXPECT_EQ(error.argument, "write data");
}

TEST(ParseErrors, BatchForgetWithTooFewRecordsIsATruncatedArgument) {
  const ParseError error = ErrorOf(Message(42, Wire().U32(2).U32(0).U64(5).U64(1)));
  EXPECT_EQ(error.kind, ParseErrorKind::kTruncatedArgument);
  EXPECT_EQ(error.argument, "forget records");
}

TEST(ParseErrors, AMissingNameIsATruncatedArgument) {
  EXPECT_EQ(ErrorOf(Message(1, Wire())).kind, ParseErrorKind::kTruncatedArgument);
}

TEST(ParseErrors, ANameRunningToTheEndWithoutNulIsNameWithoutNul) {
  const ParseError error = ErrorOf(Message(1, Wire().Text("abc")));
  EXPECT_EQ(error.kind, ParseErrorKind::kNameWithoutNul);
  EXPECT_EQ(error.argument, "name");
}

TEST(ParseErrors, ASecondNameWithoutNulIsNameWithoutNul) {
  const ParseError error = ErrorOf(Message(12, Wire().U64(2).CString("old").Text("new")));
  EXPECT_EQ(error.kind, ParseErrorKind::kNameWithoutNul);
  EXPECT_EQ(error.argument, "new name");
}

TEST(ParseErrors, LookupNameOf1024BytesParsesAnd1025IsTooLong) {
  EXPECT_TRUE(Parses(Lookup(1024)));
  const ParseError error = ErrorOf(Lookup(1025));
  EXPECT_EQ(error.kind, ParseErrorKind::kNameTooLong);
  EXPECT_EQ(error.argument, "name");
}

TEST(ParseErrors, XattrNameOf255BytesParsesAnd256IsTooLong) {
  const auto getxattr = [](size_t n) {
    return Message(22, Wire().U32(0).U32(0).CString(std::string(n, 'x')));
  };
  const auto removexattr = [](size_t n) {
    return Message(24, Wire().CString(std::string(n, 'x')));
  };
  const auto setxattr = [](size_t n) {
    return Message(21, Wire().U32(1).U32(0).U32(0).U32(0).CString(std::string(n, 'x')).U8(7));
  };
  for (const auto& make : {+getxattr, +removexattr, +setxattr}) {
    EXPECT_TRUE(Parses(make(255)));
    const ParseError error = ErrorOf(make(256));
    EXPECT_EQ(error.kind, ParseErrorKind::kNameTooLong) << OpcodeName(error.opcode);
    EXPECT_EQ(error.argument, "xattr name");
  }
}

TEST(ParseErrors, SymlinkTargetOf4095BytesParsesAnd4096IsTooLong) {
  const auto symlink = [](size_t n) {
    return Message(6, Wire().CString("link").CString(std::string(n, 't')));
  };
  EXPECT_TRUE(Parses(symlink(4095)));
  const ParseError error = ErrorOf(symlink(4096));
  EXPECT_EQ(error.kind, ParseErrorKind::kNameTooLong);
  EXPECT_EQ(error.argument, "symlink target");
}

// LOOKUP "f" followed by an extension area of `ext` (total_extlen = ext.size() / 8 unless given).
std::vector<std::byte> LookupWithExtensions(const Wire& ext, uint16_t total_extlen) {
  return Message(1, Wire().CString("f").Append(ext.bytes()), total_extlen);
}

TEST(ParseErrors, WellFormedExtensionsParse) {
  const Wire ext = Wire()
                       .U32(24)
                       .U32(1)
                       .U32(16)
                       .U32(1)
                       .U32(8)
                       .U32(0)  // one security context
                       .U32(16)
                       .U32(32)
                       .U32(1)
                       .U32(4321);  // one supplementary group
  const std::vector<std::byte> message = LookupWithExtensions(ext, 5);
  const ParseResult result = ParseRequest(message, {});
  ASSERT_TRUE(std::holds_alternative<Request>(result)) << std::get<ParseError>(result).ToString();
  const Request& request = std::get<Request>(result);
  EXPECT_EQ(std::get<op::Lookup>(request.args).name, "f");
  EXPECT_EQ(request.extensions.raw.size(), 40u);
  EXPECT_EQ(request.extensions.security_context.size(), 24u);
  ASSERT_EQ(request.extensions.supp_groups.size(), 1u);
  EXPECT_EQ(request.extensions.supp_groups[0], 4321u);
}

// READ, READDIR and READDIRPLUS (fh, offset, size, read_flags, lock_owner, flags, padding) may
// ask for as much as the connection allows and no more: a handler sizes its buffer from this.
TEST(ParseErrors, AReadSizeBeyondTheNegotiatedReplyIsTooLarge) {
  const ParseContext context{.max_reply = 1 << 20};
  for (uint32_t opcode : {15u, 28u, 44u}) {
    const auto read = [&](uint32_t size) {
      return Message(opcode, Wire().U64(1).U64(0).U32(size).U32(0).U64(0).U32(0).U32(0));
    };
    EXPECT_TRUE(Parses(read(1 << 20), context)) << opcode;
    const ParseError error = ErrorOf(read((1 << 20) + 1), context);
    EXPECT_EQ(error.kind, ParseErrorKind::kSizeTooLarge) << opcode;
    EXPECT_EQ(error.unique, kUnique) << "answerable: the caller gets EIO instead of a hang";
  }
}

// GETXATTR (size, padding, name) and LISTXATTR (size, padding): the VFS never asks for more.
TEST(ParseErrors, AnXattrSizeBeyondWhatTheVfsAllowsIsTooLarge) {
  EXPECT_TRUE(Parses(Message(22, Wire().U32(65536).U32(0).CString("user.a"))));
  EXPECT_EQ(ErrorOf(Message(22, Wire().U32(65537).U32(0).CString("user.a"))).kind,
            ParseErrorKind::kSizeTooLarge);
  EXPECT_TRUE(Parses(Message(23, Wire().U32(65536).U32(0))));
  EXPECT_EQ(ErrorOf(Message(23, Wire().U32(0xffffffff).U32(0))).kind,
            ParseErrorKind::kSizeTooLarge);
}

TEST(ParseErrors, AnExtensionOfUnknownTypeIsSkipped) {
  EXPECT_TRUE(Parses(LookupWithExtensions(Wire().U32(16).U32(99).U64(0), 2)));
}

TEST(ParseErrors, BeforeProtocol738TotalExtlenIsPaddingAndIgnored) {
  EXPECT_TRUE(Parses(Message(1, Wire().CString("f"), 0xffff), ParseContext{37, false}));
}

TEST(ParseErrors, TotalExtlenLargerThanTheBodyIsABadExtension) {
  const ParseError error = ErrorOf(LookupWithExtensions(Wire().U32(16).U32(32).U32(0).U32(0), 4));
  EXPECT_EQ(error.kind, ParseErrorKind::kBadExtension);
  EXPECT_EQ(error.unique, kUnique);
}

TEST(ParseErrors, AnExtensionHeaderOfSizeZeroIsABadExtension) {
  EXPECT_EQ(ErrorOf(LookupWithExtensions(Wire().U32(0).U32(32).U64(0), 2)).kind,
            ParseErrorKind::kBadExtension);
}

TEST(ParseErrors, AnExtensionSizeSmallerThanItsHeaderIsABadExtension) {
  EXPECT_EQ(ErrorOf(LookupWithExtensions(Wire().U32(4).U32(32).U64(0), 2)).kind,
            ParseErrorKind::kBadExtension);
}

TEST(ParseErrors, AnExtensionSizeNotAMultipleOf8IsABadExtension) {
  EXPECT_EQ(ErrorOf(LookupWithExtensions(Wire().U32(12).U32(32).U32(1).U32(5), 2)).kind,
            ParseErrorKind::kBadExtension);
}

TEST(ParseErrors, AnExtensionSizePastTheEndIsABadExtension) {
  EXPECT_EQ(ErrorOf(LookupWithExtensions(Wire().U32(24).U32(32).U32(1).U32(5), 2)).kind,
            ParseErrorKind::kBadExtension);
}

TEST(ParseErrors, ASecondExtensionPastTheEndIsABadExtension) {
  const Wire ext = Wire().U32(16).U32(32).U32(1).U32(5).U32(16).U32(99);
  EXPECT_EQ(ErrorOf(LookupWithExtensions(ext, 3)).kind, ParseErrorKind::kBadExtension);
}

TEST(ParseErrors, AGroupsCountPastTheEndIsABadExtension) {
  EXPECT_EQ(ErrorOf(LookupWithExtensions(Wire().U32(16).U32(32).U32(2).U32(5), 2)).kind,
            ParseErrorKind::kBadExtension);
  EXPECT_EQ(ErrorOf(LookupWithExtensions(Wire().U32(8).U32(32), 1)).kind,
            ParseErrorKind::kBadExtension);
}

TEST(ParseErrors, ToStringNamesTheKindTheOpcodeTheUniqueAndTheArgument) {
  const ParseError error = ErrorOf(Message(3, Wire().Zeros(15)));
  const std::string text = error.ToString();
  EXPECT_THAT(text, HasSubstr("truncated argument"));
  EXPECT_THAT(text, HasSubstr("GETATTR"));
  EXPECT_THAT(text, HasSubstr(std::to_string(kUnique)));
  EXPECT_THAT(text, HasSubstr("fixed argument"));
  EXPECT_EQ(error.ToStatus().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(error.ToStatus().message()), text);
}

TEST(ParseErrors, ToStringOfAShortHeaderNamesTheRecoveredOpcodeAndUnique) {
  const std::vector<std::byte> whole = Message(15, Wire());
  const std::string text = ErrorOf({whole.begin(), whole.begin() + 20}).ToString();
  EXPECT_THAT(text, HasSubstr("READ"));
  EXPECT_THAT(text, HasSubstr(std::to_string(kUnique)));
}

TEST(ParseErrors, ToStringOfAnUnknownOpcodeGivesItsNumber) {
  const std::string text = ErrorOf(Message(54, Wire())).ToString();
  EXPECT_THAT(text, HasSubstr("54"));
  EXPECT_THAT(text, HasSubstr(std::to_string(kUnique)));
}

TEST(ParseErrors, EveryKindHasItsOwnName) {
  std::set<std::string> names;
  for (ParseErrorKind kind : {ParseErrorKind::kShortHeader, ParseErrorKind::kLengthMismatch,
                              ParseErrorKind::kUnknownOpcode, ParseErrorKind::kTruncatedArgument,
                              ParseErrorKind::kNameWithoutNul, ParseErrorKind::kNameTooLong,
                              ParseErrorKind::kBadExtension, ParseErrorKind::kSizeTooLarge}) {
    names.insert(std::string(ParseErrorKindName(kind)));
  }
  EXPECT_EQ(names.size(), 8u);
}

}  // namespace
}  // namespace ringfuse
