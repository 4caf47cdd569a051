// Every opcode's message, cut short at every possible length, must be refused with the precise
// error and without reading a byte past the cut (each cut message lives in its own exactly-sized
// heap buffer, so AddressSanitizer sees any overread).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ringfuse/protocol/parse.h"
#include "ringfuse/request.h"
#include "tests/protocol/wire.h"

namespace ringfuse {
namespace {

using testing::Wire;

constexpr size_t kHeaderSize = 40;
constexpr uint32_t kInit = 26;
constexpr size_t kCompatInitBody = 16;

// What follows the fixed struct, in order. A name's bytes include its NUL.
struct Piece {
  enum Kind { kName, kData } kind;
  std::vector<std::byte> bytes;
};

Piece Name(std::string_view text) { return {Piece::kName, Wire().CString(text).bytes()}; }
Piece Data(const Wire& wire) { return {Piece::kData, wire.bytes()}; }
Piece Data(size_t size) {
  Wire wire;
  for (size_t i = 0; i < size; ++i) wire.U8(static_cast<uint8_t>(0xa0 + i));
  return Data(wire);
}

struct Case {
  std::string_view label;
  uint32_t opcode;
  Wire fixed;
  std::vector<Piece> tail;
  ParseContext context = {};
  uint16_t total_extlen = 0;  // extension bytes are part of the tail, as pieces of kind kData

  testing::HeaderFields Header() const {
    return {opcode, 0x1000 + opcode, 0x2000 + opcode, 1000, 1001, 4242, total_extlen};
  }
  Wire Body() const {
    Wire body = fixed;
    for (const Piece& piece : tail) body.Append(piece.bytes);
    return body;
  }
  std::vector<std::byte> Message() const { return testing::RequestMessage(Header(), Body()); }
  std::vector<std::byte> TailBytes() const {
    Wire tail_bytes;
    for (const Piece& piece : tail) tail_bytes.Append(piece.bytes);
    return tail_bytes.bytes();
  }
};

Wire ReadIn() {  // also READDIR, READDIRPLUS
  return Wire().U64(0xf1).U64(0x10000).U32(4096).U32(2).U64(0x0123).U32(0x8000).U32(0);
}
Wire ReleaseIn() { return Wire().U64(0xf2).U32(0x8002).U32(1).U64(0x0456); }
Wire FsyncIn() { return Wire().U64(0xf3).U32(1).U32(0); }
Wire SetattrIn() {
  return Wire()
      .U32(0xfff)
      .U32(0)
      .U64(0xf7)
      .U64(1234)
      .U64(0x55)
      .U64(11)
      .U64(12)
      .U64(13)
      .U32(14)
      .U32(15)
      .U32(16)
      .U32(0100600)
      .U32(0)
      .U32(1000)
      .U32(1001)
      .U32(0);
}
Wire OpenIn() { return Wire().U32(0x8002).U32(1); }
Wire LkIn() { return Wire().U64(0xf4).U64(0x789).U64(10).U64(20).U32(1).U32(4242).U32(1).U32(0); }
Wire CreateIn() { return Wire().U32(0x8041).U32(0100644).U32(022).U32(1); }
Wire CopyFileRangeIn() {
  return Wire().U64(0xf5).U64(100).U64(0x2001).U64(0xf6).U64(200).U64(1 << 20).U64(0);
}

// One valid, fully populated message per opcode 1..53 (7 and 19 do not exist).
std::vector<Case> Cases() {
  std::vector<Case> cases = {
      {"LOOKUP", 1, Wire(), {Name("lookup-name")}},
      {"FORGET", 2, Wire().U64(7), {}},
      {"GETATTR", 3, Wire().U32(1).U32(0).U64(0xfeed), {}},
      {"SETATTR", 4, SetattrIn(), {}},
      {"READLINK", 5, Wire(), {}},
      {"SYMLINK", 6, Wire(), {Name("link"), Name("/target/of/the/link")}},
      {"MKNOD", 8, Wire().U32(020644).U32(0x0801).U32(022).U32(0), {Name("device")}},
      {"MKDIR", 9, Wire().U32(040755).U32(022), {Name("directory")}},
      {"UNLINK", 10, Wire(), {Name("victim")}},
      {"RMDIR", 11, Wire(), {Name("empty-dir")}},
      {"RENAME", 12, Wire().U64(0x3001), {Name("old"), Name("new-name")}},
      {"LINK", 13, Wire().U64(0x3002), {Name("hardlink")}},
      {"OPEN", 14, OpenIn(), {}},
      {"READ", 15, ReadIn(), {}},
      {"WRITE",
       16,
       Wire().U64(0xf1).U64(512).U32(13).U32(1).U64(0x0123).U32(0x8001).U32(0),
       {Data(13)}},
      {"STATFS", 17, Wire(), {}},
      {"RELEASE", 18, ReleaseIn(), {}},
      {"FSYNC", 20, FsyncIn(), {}},
      {"SETXATTR", 21, Wire().U32(9).U32(1).U32(1).U32(0), {Name("user.test"), Data(9)}},
      {"GETXATTR", 22, Wire().U32(256).U32(0), {Name("user.other")}},
      {"LISTXATTR", 23, Wire().U32(4096).U32(0), {}},
      {"REMOVEXATTR", 24, Wire(), {Name("user.gone")}},
      {"FLUSH", 25, Wire().U64(0xf8).U32(0).U32(0).U64(0x0789), {}},
      {"INIT", kInit, Wire().U32(7).U32(45).U32(1 << 20).U32(0x7fffffff).U32(0x7ff).Zeros(44), {}},
      {"OPENDIR", 27, OpenIn(), {}},
      {"READDIR", 28, ReadIn(), {}},
      {"RELEASEDIR", 29, ReleaseIn(), {}},
      {"FSYNCDIR", 30, FsyncIn(), {}},
      {"GETLK", 31, LkIn(), {}},
      {"SETLK", 32, LkIn(), {}},
      {"SETLKW", 33, LkIn(), {}},
      {"ACCESS", 34, Wire().U32(4).U32(0), {}},
      {"CREATE", 35, CreateIn(), {Name("new-file")}},
      {"INTERRUPT", 36, Wire().U64(0x1234), {}},
      {"BMAP", 37, Wire().U64(99).U32(4096).U32(0), {}},
      {"DESTROY", 38, Wire(), {}},
      {"IOCTL", 39, Wire().U64(0xf9).U32(2).U32(0x5401).U64(0x7ffd0000).U32(6).U32(8), {Data(6)}},
      {"POLL", 40, Wire().U64(0xfa).U64(0xbeef).U32(1).U32(0x19), {}},
      {"NOTIFY_REPLY", 41, Wire().U64(0).U64(4096).U32(10).U32(0).U64(0).U64(0), {Data(10)}},
      {"BATCH_FORGET",
       42,
       Wire().U32(3).U32(0),
       {Data(Wire().U64(0x4001).U64(1).U64(0x4002).U64(2).U64(0x4003).U64(3))}},
      {"FALLOCATE", 43, Wire().U64(0xfb).U64(0).U64(1 << 20).U32(1).U32(0), {}},
      {"READDIRPLUS", 44, ReadIn(), {}},
      {"RENAME2", 45, Wire().U64(0x3003).U32(1).U32(0), {Name("from"), Name("to")}},
      {"LSEEK", 46, Wire().U64(0xfc).U64(300).U32(3).U32(0), {}},
      {"COPY_FILE_RANGE", 47, CopyFileRangeIn(), {}},
      {"SETUPMAPPING", 48, Wire().U64(0xfd).U64(0).U64(1 << 21).U64(3).U64(1 << 21), {}},
      {"REMOVEMAPPING",
       49,
       Wire().U32(2),
       {Data(Wire().U64(0).U64(1 << 21).U64(1 << 21).U64(1 << 21))}},
      {"SYNCFS", 50, Wire().U64(0), {}},
      {"TMPFILE", 51, CreateIn(), {Name("tmp")}},
      {"STATX", 52, Wire().U32(1).U32(0).U64(0xfe).U32(0).U32(0xfff), {}},
      {"COPY_FILE_RANGE_64", 53, CopyFileRangeIn(), {}},
  };
  // Without FUSE_SETXATTR_EXT the kernel sends the 8-byte compat struct.
  cases.push_back({"SETXATTR (compat)",
                   21,
                   Wire().U32(5).U32(1),
                   {Name("user.x"), Data(5)},
                   ParseContext{45, false}});
  return cases;
}

Case CaseFor(uint32_t opcode) {
  for (const Case& c : Cases()) {
    if (c.opcode == opcode) return c;
  }
  ADD_FAILURE() << "no case for opcode " << opcode;
  return {};
}

// The error a message whose body is cut to `body_size` bytes must get; nothing if it must parse.
std::optional<ParseErrorKind> ExpectedForBody(const Case& c, size_t body_size) {
  if (c.opcode == kInit) {
    // Kernels before 7.36 send only 16 bytes of fuse_init_in; any longer prefix is accepted.
    if (body_size >= kCompatInitBody) return std::nullopt;
    return ParseErrorKind::kTruncatedArgument;
  }
  if (body_size < c.fixed.size()) return ParseErrorKind::kTruncatedArgument;
  size_t at = c.fixed.size();
  for (const Piece& piece : c.tail) {
    if (body_size < at + piece.bytes.size()) {
      // A name cut after its first byte has no NUL; cut before it, the name is missing.
      return piece.kind == Piece::kName && body_size > at ? ParseErrorKind::kNameWithoutNul
                                                          : ParseErrorKind::kTruncatedArgument;
    }
    at += piece.bytes.size();
  }
  return std::nullopt;
}

std::vector<std::byte> CutCopy(const std::vector<std::byte>& message, size_t size) {
  return std::vector<std::byte>(message.begin(), message.begin() + size);
}

void PatchLen(std::vector<std::byte>& message) {
  const auto len = static_cast<uint32_t>(message.size());
  for (size_t i = 0; i < 4; ++i) message[i] = static_cast<std::byte>((len >> (8 * i)) & 0xff);
}

std::string Describe(const ParseResult& result) {
  if (const auto* error = std::get_if<ParseError>(&result)) return error->ToString();
  return "parsed OK";
}

// Checks `result` against the expectation for a cut message of `size` bytes.
void ExpectOutcome(const Case& c, const ParseResult& result,
                   std::optional<ParseErrorKind> expected) {
  if (!expected) {
    ASSERT_TRUE(std::holds_alternative<Request>(result)) << Describe(result);
    EXPECT_EQ(static_cast<uint32_t>(std::get<Request>(result).opcode), c.opcode);
    return;
  }
  const ParseError* error = std::get_if<ParseError>(&result);
  ASSERT_NE(error, nullptr) << "parsed OK; expected " << ParseErrorKindName(*expected);
  EXPECT_EQ(error->kind, *expected) << error->ToString();
  EXPECT_EQ(error->opcode, c.opcode) << error->ToString();
  EXPECT_EQ(error->unique, c.Header().unique) << error->ToString();
}

void ExpectShortHeader(const Case& c, const ParseResult& result, size_t size) {
  const ParseError* error = std::get_if<ParseError>(&result);
  ASSERT_NE(error, nullptr) << "parsed OK";
  EXPECT_EQ(error->kind, ParseErrorKind::kShortHeader) << error->ToString();
  // The unique sits in bytes 8..15 and is answerable as soon as they arrived.
  if (size >= 16) {
    EXPECT_EQ(error->unique, c.Header().unique);
    EXPECT_EQ(error->opcode, c.opcode);
  } else {
    EXPECT_FALSE(error->unique.has_value());
  }
}

TEST(TruncationTable, CoversEveryOpcodeExceptTheHoles) {
  std::set<uint32_t> covered;
  for (const Case& c : Cases()) covered.insert(c.opcode);
  for (uint32_t opcode = 1; opcode <= 53; ++opcode) {
    EXPECT_EQ(covered.count(opcode), opcode == 7 || opcode == 19 ? 0u : 1u) << opcode;
  }
  EXPECT_EQ(covered.size(), 51u);
}

TEST(Truncation, EveryCompleteMessageParses) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.label);
    const std::vector<std::byte> message = c.Message();
    const ParseResult result = ParseRequest(message, c.context);
    ASSERT_TRUE(std::holds_alternative<Request>(result)) << Describe(result);
    const Request& request = std::get<Request>(result);
    EXPECT_EQ(static_cast<uint32_t>(request.opcode), c.opcode);
    EXPECT_EQ(request.header.unique, c.Header().unique);
    EXPECT_EQ(request.header.nodeid, c.Header().nodeid);
    EXPECT_EQ(request.header.len, message.size());
  }
}

TEST(Truncation, EveryCutWithPatchedLengthFailsWithThePreciseError) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.label);
    const std::vector<std::byte> message = c.Message();
    for (size_t size = 0; size < message.size() && !HasFailure(); ++size) {
      SCOPED_TRACE(size);
      std::vector<std::byte> cut = CutCopy(message, size);
      if (size >= 4) PatchLen(cut);
      const ParseResult result = ParseRequest(cut, c.context);
      if (size < kHeaderSize) {
        ExpectShortHeader(c, result, size);
      } else {
        ExpectOutcome(c, result, ExpectedForBody(c, size - kHeaderSize));
      }
    }
  }
}

TEST(Truncation, EveryCutWithTheOriginalLengthIsALengthMismatch) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.label);
    const std::vector<std::byte> message = c.Message();
    for (size_t size = 0; size < message.size() && !HasFailure(); ++size) {
      SCOPED_TRACE(size);
      const std::vector<std::byte> cut = CutCopy(message, size);
      const ParseResult result = ParseRequest(cut, c.context);
      if (size < kHeaderSize) {
        ExpectShortHeader(c, result, size);
      } else {
        ExpectOutcome(c, result, ParseErrorKind::kLengthMismatch);
      }
    }
  }
}

TEST(Truncation, InitCutTo16Through63BodyBytesParsesWithTheMissingTailZero) {
  const Case init = CaseFor(kInit);
  const std::vector<std::byte> message = init.Message();
  for (size_t body = kCompatInitBody; body < 64; ++body) {
    SCOPED_TRACE(body);
    std::vector<std::byte> cut = CutCopy(message, kHeaderSize + body);
    PatchLen(cut);
    const ParseResult result = ParseRequest(cut, ParseContext{});
    ASSERT_TRUE(std::holds_alternative<Request>(result)) << Describe(result);
    const wire::InitIn& in = std::get<op::Init>(std::get<Request>(result).args).in;
    EXPECT_EQ(in.major, 7u);
    EXPECT_EQ(in.minor, 45u);
    EXPECT_EQ(in.flags, 0x7fffffffu);
    // flags2 keeps exactly the bytes that arrived.
    const uint64_t arrived = std::min<size_t>(body - kCompatInitBody, 4);
    EXPECT_EQ(in.flags2, 0x7ffu & ((uint64_t{1} << (8 * arrived)) - 1));
    EXPECT_EQ(in.unused[10], 0u);
  }
}

// FUSE-over-io_uring: header, fixed struct and the rest arrive in separate buffers. The kernel
// sends NOTIFY_REPLY and REMOVEMAPPING with an empty first argument (fuse_set_zero_arg0), so
// their fixed struct leads the payload and op_in holds stale bytes.
struct RingParts {
  std::vector<std::byte> op_in;
  std::vector<std::byte> payload;
  size_t payload_at;  // where the payload starts within the /dev/fuse body
};

RingParts SplitForRing(const Case& c) {
  if (c.opcode == 41 || c.opcode == 49) {
    return {std::vector<std::byte>(128, std::byte{0xee}), c.Body().bytes(), 0};
  }
  return {c.fixed.bytes(), c.TailBytes(), c.fixed.size()};
}

ParseResult ParseRing(const Case& c, const std::vector<std::byte>& op_in,
                      const std::vector<std::byte>& payload) {
  const std::vector<std::byte> in_out = CutCopy(c.Message(), kHeaderSize);
  return ParseRingRequest(in_out, op_in, payload, c.context);
}

TEST(RingTruncation, EveryCompleteRingRequestParses) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.label);
    const RingParts parts = SplitForRing(c);
    ExpectOutcome(c, ParseRing(c, parts.op_in, parts.payload), std::nullopt);
  }
}

TEST(RingTruncation, EveryCutPayloadFailsWithThePreciseError) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.label);
    const RingParts parts = SplitForRing(c);
    for (size_t size = 0; size < parts.payload.size() && !HasFailure(); ++size) {
      SCOPED_TRACE(size);
      const ParseResult result = ParseRing(c, parts.op_in, CutCopy(parts.payload, size));
      ExpectOutcome(c, result, ExpectedForBody(c, parts.payload_at + size));
    }
  }
}

TEST(RingTruncation, EveryCutFixedStructInOpInFailsAsTruncatedArgument) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.label);
    const RingParts parts = SplitForRing(c);
    if (parts.payload_at == 0) continue;  // the fixed struct is in the payload
    for (size_t size = 0; size < parts.op_in.size() && !HasFailure(); ++size) {
      SCOPED_TRACE(size);
      const ParseResult result = ParseRing(c, CutCopy(parts.op_in, size), parts.payload);
      ExpectOutcome(c, result, ExpectedForBody(c, size));
    }
  }
}

TEST(RingTruncation, EveryCutHeaderIsAShortHeader) {
  const Case lookup = CaseFor(1);
  const std::vector<std::byte> message = lookup.Message();
  for (size_t size = 0; size < kHeaderSize; ++size) {
    const ParseResult result =
        ParseRingRequest(CutCopy(message, size), {}, lookup.TailBytes(), ParseContext{});
    ASSERT_TRUE(std::holds_alternative<ParseError>(result)) << size;
    EXPECT_EQ(std::get<ParseError>(result).kind, ParseErrorKind::kShortHeader) << size;
  }
}

// CREATE with a supplementary-groups extension (size 16, type 32, one group) after its name.
Case CreateWithGroups() {
  return {"CREATE+groups", 35,
          CreateIn(),      {Name("file"), Data(Wire().U32(16).U32(32).U32(1).U32(1234))},
          ParseContext{},  2};
}

TEST(Truncation, CreateWithGroupsExtensionParsesWhole) {
  const Case c = CreateWithGroups();
  const std::vector<std::byte> message = c.Message();
  const ParseResult result = ParseRequest(message, c.context);
  ASSERT_TRUE(std::holds_alternative<Request>(result)) << Describe(result);
  const Request& request = std::get<Request>(result);
  EXPECT_EQ(std::get<op::Create>(request.args).name, "file");
  ASSERT_EQ(request.extensions.supp_groups.size(), 1u);
  EXPECT_EQ(request.extensions.supp_groups[0], 1234u);
}

// The extension is found from the end of the message: a cut shifts it onto the name or off the
// message, and either way it no longer reads as an extension.
TEST(Truncation, EveryCutOfAMessageWithExtensionsIsABadExtension) {
  const Case c = CreateWithGroups();
  const std::vector<std::byte> message = c.Message();
  for (size_t size = kHeaderSize; size < message.size(); ++size) {
    SCOPED_TRACE(size);
    std::vector<std::byte> cut = CutCopy(message, size);
    PatchLen(cut);
    ExpectOutcome(c, ParseRequest(cut, c.context), ParseErrorKind::kBadExtension);
  }
  const RingParts parts = SplitForRing(c);
  for (size_t size = 0; size < parts.payload.size(); ++size) {
    SCOPED_TRACE(size);
    ExpectOutcome(c, ParseRing(c, parts.op_in, CutCopy(parts.payload, size)),
                  ParseErrorKind::kBadExtension);
  }
}

}  // namespace
}  // namespace ringfuse
