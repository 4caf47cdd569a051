// Every request opcode, built byte by byte from the kernel's layout and parsed back: each field
// carries its own value, so a swapped, shifted or dropped field shows up as a wrong number.
#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ringfuse/protocol/parse.h"
#include "ringfuse/request.h"
#include "tests/protocol/wire.h"

namespace ringfuse {
namespace {

using namespace std::string_view_literals;

constexpr uint64_t kNodeid = 0x1a2b3c4d5e6f7081;
constexpr uint32_t kUid = 0x11223344;
constexpr uint32_t kGid = 0x55667788;
constexpr uint32_t kPid = 0x0badcafe;

// Differs per opcode, so a reply routed by a stale unique would be caught elsewhere too.
uint64_t UniqueFor(Opcode opcode) {
  return 0x7e00000000000000 | (uint64_t{static_cast<uint32_t>(opcode)} << 8) | 0x5a;
}

testing::HeaderFields HeaderFor(Opcode opcode, uint16_t total_extlen = 0) {
  return {.opcode = static_cast<uint32_t>(opcode),
          .unique = UniqueFor(opcode),
          .nodeid = kNodeid,
          .uid = kUid,
          .gid = kGid,
          .pid = kPid,
          .total_extlen = total_extlen};
}

std::string_view View(ConstBytes bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

class GoldenRequest : public ::testing::Test {
 protected:
  // Parses `body` behind a header for `opcode` and returns the typed view. The message lives in
  // the fixture, so the views in the result stay valid for the whole test.
  template <typename Op>
  Op Parse(Opcode opcode, const testing::Wire& body, const ParseContext& context = {},
           uint16_t total_extlen = 0) {
    message_ = testing::RequestMessage(HeaderFor(opcode, total_extlen), body);
    return Check<Op>(ParseRequest(message_, context), opcode,
                     static_cast<uint32_t>(message_.size()), total_extlen);
  }

  // The same request delivered over io_uring: header in a 128-byte in_out, `fixed` at the start
  // of a 128-byte op_in whose remaining bytes are stale garbage, and `payload` after.
  template <typename Op>
  Op ParseRing(Opcode opcode, const testing::Wire& fixed, const testing::Wire& payload) {
    testing::Wire whole;
    whole.Append(fixed.bytes()).Append(payload.bytes());
    const std::vector<std::byte> message = testing::RequestMessage(HeaderFor(opcode), whole);
    testing::Wire in_out;
    in_out.Append(std::vector<std::byte>(message.begin(), message.begin() + 40)).Zeros(88);
    testing::Wire op_in;
    op_in.Append(fixed.bytes());
    while (op_in.size() < 128) op_in.U8(0xee);
    in_out_ = in_out.bytes();
    op_in_ = op_in.bytes();
    payload_ = payload.bytes();
    return Check<Op>(ParseRingRequest(in_out_, op_in_, payload_, ParseContext{}), opcode,
                     static_cast<uint32_t>(message.size()), 0);
  }

  template <typename Op>
  Op Check(ParseResult result, Opcode opcode, uint32_t len, uint16_t total_extlen) {
    if (const ParseError* error = std::get_if<ParseError>(&result)) {
      ADD_FAILURE() << error->ToString();
      return Op{};
    }
    request_ = std::get<Request>(std::move(result));
    const wire::InHeader& h = request_.header;
    EXPECT_EQ(h.len, len);
    EXPECT_EQ(h.opcode, static_cast<uint32_t>(opcode));
    EXPECT_EQ(h.unique, UniqueFor(opcode));
    EXPECT_EQ(h.nodeid, kNodeid);
    EXPECT_EQ(h.uid, kUid);
    EXPECT_EQ(h.gid, kGid);
    EXPECT_EQ(h.pid, kPid);
    EXPECT_EQ(h.total_extlen, total_extlen);
    EXPECT_EQ(request_.opcode, opcode);
    const Op* args = std::get_if<Op>(&request_.args);
    if (args == nullptr) {
      ADD_FAILURE() << "wrong argument type, variant index " << request_.args.index();
      return Op{};
    }
    return *args;
  }

  std::vector<std::byte> message_;
  std::vector<std::byte> in_out_;
  std::vector<std::byte> op_in_;
  std::vector<std::byte> payload_;
  Request request_{};
};

// fuse_read_in with distinct values, shared by READ, READDIR and READDIRPLUS.
testing::Wire ReadInWire() {
  testing::Wire wire;
  wire.U64(0x0f1e2d3c4b5a6978)  // fh
      .U64(0x0000123456789abc)  // offset
      .U32(0x00021000)          // size
      .U32(0x00000002)          // read_flags
      .U64(0xdeadbeefcafef00d)  // lock_owner
      .U32(0x00008002)          // flags
      .U32(0x5a5a5a5a);         // padding
  return wire;
}

void ExpectReadIn(const wire::ReadIn& in) {
  EXPECT_EQ(in.fh, 0x0f1e2d3c4b5a6978u);
  EXPECT_EQ(in.offset, 0x0000123456789abcu);
  EXPECT_EQ(in.size, 0x00021000u);
  EXPECT_EQ(in.read_flags, 0x00000002u);
  EXPECT_EQ(in.lock_owner, 0xdeadbeefcafef00du);
  EXPECT_EQ(in.flags, 0x00008002u);
  EXPECT_EQ(in.padding, 0x5a5a5a5au);
}

testing::Wire OpenInWire() {
  testing::Wire wire;
  wire.U32(0x00088042)   // flags
      .U32(0x00000001);  // open_flags
  return wire;
}

testing::Wire ReleaseInWire() {
  testing::Wire wire;
  wire.U64(0x7766554433221100)   // fh
      .U32(0x00008001)           // flags
      .U32(0x00000003)           // release_flags
      .U64(0x0123456789abcdef);  // lock_owner
  return wire;
}

void ExpectReleaseIn(const wire::ReleaseIn& in) {
  EXPECT_EQ(in.fh, 0x7766554433221100u);
  EXPECT_EQ(in.flags, 0x00008001u);
  EXPECT_EQ(in.release_flags, 0x00000003u);
  EXPECT_EQ(in.lock_owner, 0x0123456789abcdefu);
}

testing::Wire FsyncInWire() {
  testing::Wire wire;
  wire.U64(0x1122334455667788)  // fh
      .U32(0x00000001)          // fsync_flags
      .U32(0x0000beef);         // padding
  return wire;
}

void ExpectFsyncIn(const wire::FsyncIn& in) {
  EXPECT_EQ(in.fh, 0x1122334455667788u);
  EXPECT_EQ(in.fsync_flags, 0x00000001u);
  EXPECT_EQ(in.padding, 0x0000beefu);
}

testing::Wire LkInWire() {
  testing::Wire wire;
  wire.U64(0x00000000000000f1)  // fh
      .U64(0x0102030405060708)  // owner
      .U64(0x0000000000001000)  // lk.start
      .U64(0x7fffffffffffffff)  // lk.end
      .U32(0x00000001)          // lk.type
      .U32(0x00004321)          // lk.pid
      .U32(0x00000001)          // lk_flags
      .U32(0x0000abcd);         // padding
  return wire;
}

void ExpectLkIn(const wire::LkIn& in) {
  EXPECT_EQ(in.fh, 0xf1u);
  EXPECT_EQ(in.owner, 0x0102030405060708u);
  EXPECT_EQ(in.lk.start, 0x1000u);
  EXPECT_EQ(in.lk.end, 0x7fffffffffffffffu);
  EXPECT_EQ(in.lk.type, 1u);
  EXPECT_EQ(in.lk.pid, 0x4321u);
  EXPECT_EQ(in.lk_flags, 1u);
  EXPECT_EQ(in.padding, 0xabcdu);
}

testing::Wire CreateInWire() {
  testing::Wire wire;
  wire.U32(0x000080c2)   // flags
      .U32(0x000081a4)   // mode
      .U32(0x00000022)   // umask
      .U32(0x00000001);  // open_flags
  return wire;
}

void ExpectCreateIn(const wire::CreateIn& in) {
  EXPECT_EQ(in.flags, 0x000080c2u);
  EXPECT_EQ(in.mode, 0x000081a4u);
  EXPECT_EQ(in.umask, 0x00000022u);
  EXPECT_EQ(in.open_flags, 0x00000001u);
}

testing::Wire CopyFileRangeInWire() {
  testing::Wire wire;
  wire.U64(0x1000000000000001)   // fh_in
      .U64(0x2000000000000002)   // off_in
      .U64(0x3000000000000003)   // nodeid_out
      .U64(0x4000000000000004)   // fh_out
      .U64(0x5000000000000005)   // off_out
      .U64(0x6000000000000006)   // len
      .U64(0x7000000000000007);  // flags
  return wire;
}

void ExpectCopyFileRangeIn(const wire::CopyFileRangeIn& in) {
  EXPECT_EQ(in.fh_in, 0x1000000000000001u);
  EXPECT_EQ(in.off_in, 0x2000000000000002u);
  EXPECT_EQ(in.nodeid_out, 0x3000000000000003u);
  EXPECT_EQ(in.fh_out, 0x4000000000000004u);
  EXPECT_EQ(in.off_out, 0x5000000000000005u);
  EXPECT_EQ(in.len, 0x6000000000000006u);
  EXPECT_EQ(in.flags, 0x7000000000000007u);
}

TEST_F(GoldenRequest, LookupReadsTheName) {
  const auto op = Parse<op::Lookup>(Opcode::kLookup, testing::Wire().CString("lookup-name"));
  EXPECT_EQ(op.name, "lookup-name");
}

TEST_F(GoldenRequest, ForgetReadsNlookup) {
  const auto op = Parse<op::Forget>(Opcode::kForget, testing::Wire().U64(0x0000000100000002));
  EXPECT_EQ(op.in.nlookup, 0x0000000100000002u);
}

TEST_F(GoldenRequest, GetattrReadsFlagsDummyAndFh) {
  const auto op = Parse<op::Getattr>(
      Opcode::kGetattr, testing::Wire().U32(0x00000001).U32(0x0000d00d).U64(0x8877665544332211));
  EXPECT_EQ(op.in.getattr_flags, 1u);
  EXPECT_EQ(op.in.dummy, 0xd00du);
  EXPECT_EQ(op.in.fh, 0x8877665544332211u);
  EXPECT_EQ(op.fh(), 0x8877665544332211u);  // FUSE_GETATTR_FH is the flag sent
}

TEST_F(GoldenRequest, SetattrReadsEveryField) {
  testing::Wire body;
  body.U32(0x00000fff)          // valid
      .U32(0x0000a0a0)          // padding
      .U64(0x0000000000000abc)  // fh
      .U64(0x0000000012345678)  // size
      .U64(0x1111222233334444)  // lock_owner
      .U64(0x0000000060000001)  // atime
      .U64(0x0000000060000002)  // mtime
      .U64(0x0000000060000003)  // ctime
      .U32(0x00000011)          // atimensec
      .U32(0x00000022)          // mtimensec
      .U32(0x00000033)          // ctimensec
      .U32(0x000041ed)          // mode
      .U32(0x0000b4b4)          // unused4
      .U32(0x000003e8)          // uid
      .U32(0x000003e9)          // gid
      .U32(0x0000c5c5);         // unused5
  const auto op = Parse<op::Setattr>(Opcode::kSetattr, body);
  EXPECT_EQ(op.in.valid, 0xfffu);
  EXPECT_EQ(op.in.padding, 0xa0a0u);
  EXPECT_EQ(op.in.fh, 0xabcu);
  EXPECT_EQ(op.in.size, 0x12345678u);
  EXPECT_EQ(op.in.lock_owner, 0x1111222233334444u);
  EXPECT_EQ(op.in.atime, 0x60000001u);
  EXPECT_EQ(op.in.mtime, 0x60000002u);
  EXPECT_EQ(op.in.ctime, 0x60000003u);
  EXPECT_EQ(op.in.atimensec, 0x11u);
  EXPECT_EQ(op.in.mtimensec, 0x22u);
  EXPECT_EQ(op.in.ctimensec, 0x33u);
  EXPECT_EQ(op.in.mode, 0x41edu);
  EXPECT_EQ(op.in.unused4, 0xb4b4u);
  EXPECT_EQ(op.in.uid, 1000u);
  EXPECT_EQ(op.in.gid, 1001u);
  EXPECT_EQ(op.in.unused5, 0xc5c5u);
}

TEST_F(GoldenRequest, ReadlinkHasNoArguments) {
  Parse<op::Readlink>(Opcode::kReadlink, testing::Wire());
}

TEST_F(GoldenRequest, SymlinkReadsTheNameThenTheTarget) {
  const auto op = Parse<op::Symlink>(
      Opcode::kSymlink, testing::Wire().CString("link-name").CString("../target/path"));
  EXPECT_EQ(op.name, "link-name");
  EXPECT_EQ(op.target, "../target/path");
}

TEST_F(GoldenRequest, MknodReadsTheStructAndTheName) {
  testing::Wire body;
  body.U32(0x000021b6)  // mode
      .U32(0x00000803)  // rdev
      .U32(0x00000012)  // umask
      .U32(0x0000f00f)  // padding
      .CString("device-node");
  const auto op = Parse<op::Mknod>(Opcode::kMknod, body);
  EXPECT_EQ(op.in.mode, 0x21b6u);
  EXPECT_EQ(op.in.rdev, 0x803u);
  EXPECT_EQ(op.in.umask, 0x12u);
  EXPECT_EQ(op.in.padding, 0xf00fu);
  EXPECT_EQ(op.name, "device-node");
}

TEST_F(GoldenRequest, MkdirReadsModeUmaskAndName) {
  const auto op = Parse<op::Mkdir>(
      Opcode::kMkdir, testing::Wire().U32(0x000001ed).U32(0x00000027).CString("new-directory"));
  EXPECT_EQ(op.in.mode, 0x1edu);
  EXPECT_EQ(op.in.umask, 0x27u);
  EXPECT_EQ(op.name, "new-directory");
}

TEST_F(GoldenRequest, UnlinkReadsTheName) {
  const auto op = Parse<op::Unlink>(Opcode::kUnlink, testing::Wire().CString("doomed-file"));
  EXPECT_EQ(op.name, "doomed-file");
}

TEST_F(GoldenRequest, RmdirReadsTheName) {
  const auto op = Parse<op::Rmdir>(Opcode::kRmdir, testing::Wire().CString("doomed-dir"));
  EXPECT_EQ(op.name, "doomed-dir");
}

TEST_F(GoldenRequest, RenameReadsNewdirAndBothNamesWithZeroFlags) {
  const auto op = Parse<op::Rename>(
      Opcode::kRename,
      testing::Wire().U64(0x00000000feedface).CString("old-name").CString("new-name"));
  EXPECT_EQ(op.newdir(), 0xfeedfaceu);
  EXPECT_EQ(op.flags(), 0u);
  EXPECT_EQ(op.old_name, "old-name");
  EXPECT_EQ(op.new_name, "new-name");
}

TEST_F(GoldenRequest, LinkReadsOldnodeidAndNewName) {
  const auto op =
      Parse<op::Link>(Opcode::kLink, testing::Wire().U64(0x0000000000abcdef).CString("hard-link"));
  EXPECT_EQ(op.in.oldnodeid, 0xabcdefu);
  EXPECT_EQ(op.new_name, "hard-link");
}

TEST_F(GoldenRequest, OpenReadsFlagsAndOpenFlags) {
  const auto op = Parse<op::Open>(Opcode::kOpen, OpenInWire());
  EXPECT_EQ(op.in.flags, 0x00088042u);
  EXPECT_EQ(op.in.open_flags, 1u);
}

TEST_F(GoldenRequest, ReadReadsEveryField) {
  ExpectReadIn(Parse<op::Read>(Opcode::kRead, ReadInWire()).in);
}

TEST_F(GoldenRequest, WriteReadsTheStructAndExactlySizeBytesOfData) {
  constexpr std::string_view kData = "wr\0te\xff-data"sv;
  testing::Wire body;
  body.U64(0x0f0e0d0c0b0a0908)  // fh
      .U64(0x0000000000400000)  // offset
      .U32(kData.size())        // size
      .U32(0x00000007)          // write_flags
      .U64(0x1234123412341234)  // lock_owner
      .U32(0x00000401)          // flags
      .U32(0x00007777)          // padding
      .Text(kData);
  const auto op = Parse<op::Write>(Opcode::kWrite, body);
  EXPECT_EQ(op.in.fh, 0x0f0e0d0c0b0a0908u);
  EXPECT_EQ(op.in.offset, 0x400000u);
  EXPECT_EQ(op.in.size, kData.size());
  EXPECT_EQ(op.in.write_flags, 7u);
  EXPECT_EQ(op.in.lock_owner, 0x1234123412341234u);
  EXPECT_EQ(op.in.flags, 0x401u);
  EXPECT_EQ(op.in.padding, 0x7777u);
  EXPECT_EQ(View(op.data), kData);
}

TEST_F(GoldenRequest, StatfsHasNoArguments) { Parse<op::Statfs>(Opcode::kStatfs, testing::Wire()); }

TEST_F(GoldenRequest, ReleaseReadsEveryField) {
  ExpectReleaseIn(Parse<op::Release>(Opcode::kRelease, ReleaseInWire()).in);
}

TEST_F(GoldenRequest, FsyncReadsEveryField) {
  ExpectFsyncIn(Parse<op::Fsync>(Opcode::kFsync, FsyncInWire()).in);
}

TEST_F(GoldenRequest, SetxattrWithExtReadsTheSixteenByteStructNameAndValue) {
  constexpr std::string_view kValue = "va\0lue"sv;
  testing::Wire body;
  body.U32(kValue.size())  // size
      .U32(0x00000002)     // flags (XATTR_REPLACE)
      .U32(0x00000001)     // setxattr_flags
      .U32(0x0000e1e1)     // padding
      .CString("user.golden")
      .Text(kValue);
  const auto op = Parse<op::Setxattr>(Opcode::kSetxattr, body, ParseContext{.setxattr_ext = true});
  EXPECT_EQ(op.in.size, kValue.size());
  EXPECT_EQ(op.in.flags, 2u);
  EXPECT_EQ(op.in.setxattr_flags, 1u);
  EXPECT_EQ(op.in.padding, 0xe1e1u);
  EXPECT_EQ(op.name, "user.golden");
  EXPECT_EQ(View(op.value), kValue);
}

TEST_F(GoldenRequest, SetxattrWithoutExtReadsTheEightByteCompatStruct) {
  constexpr std::string_view kValue = "compat-value"sv;
  testing::Wire body;
  body.U32(kValue.size())  // size
      .U32(0x00000001)     // flags (XATTR_CREATE)
      .CString("trusted.old")
      .Text(kValue);
  const auto op = Parse<op::Setxattr>(Opcode::kSetxattr, body, ParseContext{.setxattr_ext = false});
  EXPECT_EQ(op.in.size, kValue.size());
  EXPECT_EQ(op.in.flags, 1u);
  EXPECT_EQ(op.in.setxattr_flags, 0u);
  EXPECT_EQ(op.in.padding, 0u);
  EXPECT_EQ(op.name, "trusted.old");
  EXPECT_EQ(View(op.value), kValue);
}

TEST_F(GoldenRequest, GetxattrReadsSizePaddingAndName) {
  const auto op = Parse<op::Getxattr>(
      Opcode::kGetxattr, testing::Wire().U32(0x00010000).U32(0x00003c3c).CString("security.x"));
  EXPECT_EQ(op.in.size, 0x10000u);
  EXPECT_EQ(op.in.padding, 0x3c3cu);
  EXPECT_EQ(op.name, "security.x");
}

TEST_F(GoldenRequest, ListxattrReadsSizeAndPadding) {
  const auto op =
      Parse<op::Listxattr>(Opcode::kListxattr, testing::Wire().U32(0x00000400).U32(0x00004d4d));
  EXPECT_EQ(op.in.size, 0x400u);
  EXPECT_EQ(op.in.padding, 0x4d4du);
}

TEST_F(GoldenRequest, RemovexattrReadsTheName) {
  const auto op =
      Parse<op::Removexattr>(Opcode::kRemovexattr, testing::Wire().CString("user.gone"));
  EXPECT_EQ(op.name, "user.gone");
}

TEST_F(GoldenRequest, FlushReadsEveryField) {
  testing::Wire body;
  body.U64(0x00000000000f105e)   // fh
      .U32(0x00006e6e)           // unused
      .U32(0x00007f7f)           // padding
      .U64(0xabcdef0123456789);  // lock_owner
  const auto op = Parse<op::Flush>(Opcode::kFlush, body);
  EXPECT_EQ(op.in.fh, 0xf105eu);
  EXPECT_EQ(op.in.unused, 0x6e6eu);
  EXPECT_EQ(op.in.padding, 0x7f7fu);
  EXPECT_EQ(op.in.lock_owner, 0xabcdef0123456789u);
}

TEST_F(GoldenRequest, InitReadsTheSixtyFourByteStruct) {
  testing::Wire body;
  body.U32(7).U32(45).U32(0x00020000).U32(0xc3fffffb).U32(0x000007ff);
  for (uint32_t i = 0; i < 11; ++i) body.U32(0xa0 + i);
  const auto op = Parse<op::Init>(Opcode::kInit, body);
  EXPECT_EQ(op.in.major, 7u);
  EXPECT_EQ(op.in.minor, 45u);
  EXPECT_EQ(op.in.max_readahead, 0x20000u);
  EXPECT_EQ(op.in.flags, 0xc3fffffbu);
  EXPECT_EQ(op.in.flags2, 0x7ffu);
  for (uint32_t i = 0; i < 11; ++i) EXPECT_EQ(op.in.unused[i], 0xa0 + i) << i;
}

TEST_F(GoldenRequest, InitFromAPre736KernelReadsSixteenBytesAndZeroFlags2) {
  const auto op = Parse<op::Init>(Opcode::kInit,
                                  testing::Wire().U32(7).U32(34).U32(0x00010000).U32(0x03fffffb));
  EXPECT_EQ(op.in.major, 7u);
  EXPECT_EQ(op.in.minor, 34u);
  EXPECT_EQ(op.in.max_readahead, 0x10000u);
  EXPECT_EQ(op.in.flags, 0x03fffffbu);
  EXPECT_EQ(op.in.flags2, 0u);
  for (uint32_t i = 0; i < 11; ++i) EXPECT_EQ(op.in.unused[i], 0u) << i;
}

TEST_F(GoldenRequest, OpendirReadsFlagsAndOpenFlags) {
  const auto op = Parse<op::Opendir>(Opcode::kOpendir, OpenInWire());
  EXPECT_EQ(op.in.flags, 0x00088042u);
  EXPECT_EQ(op.in.open_flags, 1u);
}

TEST_F(GoldenRequest, ReaddirReadsEveryField) {
  ExpectReadIn(Parse<op::Readdir>(Opcode::kReaddir, ReadInWire()).in);
}

TEST_F(GoldenRequest, ReleasedirReadsEveryField) {
  ExpectReleaseIn(Parse<op::Releasedir>(Opcode::kReleasedir, ReleaseInWire()).in);
}

TEST_F(GoldenRequest, FsyncdirReadsEveryField) {
  ExpectFsyncIn(Parse<op::Fsyncdir>(Opcode::kFsyncdir, FsyncInWire()).in);
}

TEST_F(GoldenRequest, GetlkReadsEveryFieldIncludingTheLock) {
  ExpectLkIn(Parse<op::Getlk>(Opcode::kGetlk, LkInWire()).in);
}

TEST_F(GoldenRequest, SetlkReadsTheLockAndDoesNotWait) {
  const auto op = Parse<op::Setlk>(Opcode::kSetlk, LkInWire());
  ExpectLkIn(op.in);
  EXPECT_FALSE(op.wait);
}

TEST_F(GoldenRequest, SetlkwReadsTheLockAndWaits) {
  const auto op = Parse<op::Setlk>(Opcode::kSetlkw, LkInWire());
  ExpectLkIn(op.in);
  EXPECT_TRUE(op.wait);
}

TEST_F(GoldenRequest, AccessReadsMaskAndPadding) {
  const auto op = Parse<op::Access>(Opcode::kAccess, testing::Wire().U32(0x00000006).U32(0x9a9a));
  EXPECT_EQ(op.in.mask, 6u);
  EXPECT_EQ(op.in.padding, 0x9a9au);
}

TEST_F(GoldenRequest, CreateReadsTheStructAndTheName) {
  const auto op = Parse<op::Create>(Opcode::kCreate, CreateInWire().CString("created-file"));
  ExpectCreateIn(op.in);
  EXPECT_EQ(op.name, "created-file");
  EXPECT_TRUE(request_.extensions.supp_groups.empty());
  EXPECT_TRUE(request_.extensions.raw.empty());
}

TEST_F(GoldenRequest, InterruptReadsTheInterruptedUnique) {
  const auto op = Parse<op::Interrupt>(Opcode::kInterrupt, testing::Wire().U64(0x00000000000abcd4));
  EXPECT_EQ(op.in.unique, 0xabcd4u);
}

TEST_F(GoldenRequest, BmapReadsBlockBlocksizeAndPadding) {
  const auto op = Parse<op::Bmap>(
      Opcode::kBmap, testing::Wire().U64(0x0000000987654321).U32(0x00001000).U32(0x0000abab));
  EXPECT_EQ(op.in.block, 0x987654321u);
  EXPECT_EQ(op.in.blocksize, 0x1000u);
  EXPECT_EQ(op.in.padding, 0xababu);
}

TEST_F(GoldenRequest, DestroyHasNoArguments) {
  Parse<op::Destroy>(Opcode::kDestroy, testing::Wire());
}

TEST_F(GoldenRequest, IoctlReadsTheStructAndInSizeBytesOfInput) {
  constexpr std::string_view kInput = "io\0ctl-in"sv;
  testing::Wire body;
  body.U64(0x00000000000000fe)  // fh
      .U32(0x00000012)          // flags
      .U32(0x80045401)          // cmd
      .U64(0x00007ffd12345678)  // arg
      .U32(kInput.size())       // in_size
      .U32(0x00000100)          // out_size
      .Text(kInput);
  const auto op = Parse<op::Ioctl>(Opcode::kIoctl, body);
  EXPECT_EQ(op.in.fh, 0xfeu);
  EXPECT_EQ(op.in.flags, 0x12u);
  EXPECT_EQ(op.in.cmd, 0x80045401u);
  EXPECT_EQ(op.in.arg, 0x00007ffd12345678u);
  EXPECT_EQ(op.in.in_size, kInput.size());
  EXPECT_EQ(op.in.out_size, 0x100u);
  EXPECT_EQ(View(op.in_data), kInput);
}

TEST_F(GoldenRequest, PollReadsEveryField) {
  testing::Wire body;
  body.U64(0x00000000000000a1)  // fh
      .U64(0x00000000000000b2)  // kh
      .U32(0x00000001)          // flags
      .U32(0x00000019);         // events
  const auto op = Parse<op::Poll>(Opcode::kPoll, body);
  EXPECT_EQ(op.in.fh, 0xa1u);
  EXPECT_EQ(op.in.kh, 0xb2u);
  EXPECT_EQ(op.in.flags, 1u);
  EXPECT_EQ(op.in.events, 0x19u);
}

TEST_F(GoldenRequest, NotifyReplyReadsTheStructAndSizeBytesOfData) {
  constexpr std::string_view kData = "retrieved\0page"sv;
  testing::Wire body;
  body.U64(0x1111111111111111)  // dummy1
      .U64(0x0000000000002000)  // offset
      .U32(kData.size())        // size
      .U32(0x22222222)          // dummy2
      .U64(0x3333333333333333)  // dummy3
      .U64(0x4444444444444444)  // dummy4
      .Text(kData);
  const auto op = Parse<op::NotifyReply>(Opcode::kNotifyReply, body);
  EXPECT_EQ(op.in.dummy1, 0x1111111111111111u);
  EXPECT_EQ(op.in.offset, 0x2000u);
  EXPECT_EQ(op.in.size, kData.size());
  EXPECT_EQ(op.in.dummy2, 0x22222222u);
  EXPECT_EQ(op.in.dummy3, 0x3333333333333333u);
  EXPECT_EQ(op.in.dummy4, 0x4444444444444444u);
  EXPECT_EQ(View(op.data), kData);
}

TEST_F(GoldenRequest, BatchForgetReadsEveryRecordInOrder) {
  testing::Wire body;
  body.U32(3)           // count
      .U32(0x0000dddd)  // dummy
      .U64(0x0000000000000101)
      .U64(0x0000000000000011)
      .U64(0x0000000000000202)
      .U64(0x0000000000000022)
      .U64(0x0000000000000303)
      .U64(0x0000000000000033);
  const auto op = Parse<op::BatchForget>(Opcode::kBatchForget, body);
  ASSERT_EQ(op.forgets.size(), 3u);
  EXPECT_EQ(op.forgets[0].nodeid, 0x101u);
  EXPECT_EQ(op.forgets[0].nlookup, 0x11u);
  EXPECT_EQ(op.forgets[1].nodeid, 0x202u);
  EXPECT_EQ(op.forgets[1].nlookup, 0x22u);
  EXPECT_EQ(op.forgets[2].nodeid, 0x303u);
  EXPECT_EQ(op.forgets[2].nlookup, 0x33u);
}

TEST_F(GoldenRequest, FallocateReadsEveryField) {
  testing::Wire body;
  body.U64(0x00000000000000c3)  // fh
      .U64(0x0000000000100000)  // offset
      .U64(0x0000000000200000)  // length
      .U32(0x00000003)          // mode
      .U32(0x0000d4d4);         // padding
  const auto op = Parse<op::Fallocate>(Opcode::kFallocate, body);
  EXPECT_EQ(op.in.fh, 0xc3u);
  EXPECT_EQ(op.in.offset, 0x100000u);
  EXPECT_EQ(op.in.length, 0x200000u);
  EXPECT_EQ(op.in.mode, 3u);
  EXPECT_EQ(op.in.padding, 0xd4d4u);
}

TEST_F(GoldenRequest, ReaddirplusReadsEveryField) {
  ExpectReadIn(Parse<op::Readdirplus>(Opcode::kReaddirplus, ReadInWire()).in);
}

TEST_F(GoldenRequest, Rename2ReadsNewdirFlagsAndBothNames) {
  testing::Wire body;
  body.U64(0x00000000000c0ffe)  // newdir
      .U32(0x00000002)          // flags (EXCHANGE)
      .U32(0x0000e5e5)          // padding
      .CString("from")
      .CString("to-somewhere");
  const auto op = Parse<op::Rename>(Opcode::kRename2, body);
  EXPECT_EQ(op.newdir(), 0xc0ffeu);
  EXPECT_EQ(op.flags(), 2u);
  EXPECT_EQ(op.old_name, "from");
  EXPECT_EQ(op.new_name, "to-somewhere");
}

TEST_F(GoldenRequest, LseekReadsEveryField) {
  testing::Wire body;
  body.U64(0x00000000000000d5)  // fh
      .U64(0x0000000000012345)  // offset
      .U32(0x00000003)          // whence
      .U32(0x0000f6f6);         // padding
  const auto op = Parse<op::Lseek>(Opcode::kLseek, body);
  EXPECT_EQ(op.in.fh, 0xd5u);
  EXPECT_EQ(op.in.offset, 0x12345u);
  EXPECT_EQ(op.in.whence, 3u);
  EXPECT_EQ(op.in.padding, 0xf6f6u);
}

TEST_F(GoldenRequest, CopyFileRangeReadsEveryFieldAndAsksForTheNarrowReply) {
  const auto op = Parse<op::CopyFileRange>(Opcode::kCopyFileRange, CopyFileRangeInWire());
  ExpectCopyFileRangeIn(op.in);
  EXPECT_FALSE(op.wide_reply);
}

TEST_F(GoldenRequest, CopyFileRange64ReadsEveryFieldAndAsksForTheWideReply) {
  const auto op = Parse<op::CopyFileRange>(Opcode::kCopyFileRange64, CopyFileRangeInWire());
  ExpectCopyFileRangeIn(op.in);
  EXPECT_TRUE(op.wide_reply);
}

TEST_F(GoldenRequest, SetupmappingReadsEveryField) {
  testing::Wire body;
  body.U64(0x00000000000000e7)   // fh
      .U64(0x0000000000200000)   // foffset
      .U64(0x0000000000400000)   // len
      .U64(0x0000000000000003)   // flags
      .U64(0x0000000000600000);  // moffset
  const auto op = Parse<op::SetupMapping>(Opcode::kSetupMapping, body);
  EXPECT_EQ(op.in.fh, 0xe7u);
  EXPECT_EQ(op.in.foffset, 0x200000u);
  EXPECT_EQ(op.in.len, 0x400000u);
  EXPECT_EQ(op.in.flags, 3u);
  EXPECT_EQ(op.in.moffset, 0x600000u);
}

// fuse_removemapping_in is 4 bytes, so the records start unaligned, right after it.
TEST_F(GoldenRequest, RemovemappingReadsTheRecordsRightAfterTheFourByteCount) {
  testing::Wire body;
  body.U32(2)  // count
      .U64(0x0000000000a00000)
      .U64(0x0000000000001000)
      .U64(0x0000000000b00000)
      .U64(0x0000000000002000);
  const auto op = Parse<op::RemoveMapping>(Opcode::kRemoveMapping, body);
  ASSERT_EQ(op.mappings.size(), 2u);
  EXPECT_EQ(op.mappings[0].moffset, 0xa00000u);
  EXPECT_EQ(op.mappings[0].len, 0x1000u);
  EXPECT_EQ(op.mappings[1].moffset, 0xb00000u);
  EXPECT_EQ(op.mappings[1].len, 0x2000u);
}

TEST_F(GoldenRequest, SyncfsReadsItsPadding) {
  const auto op = Parse<op::Syncfs>(Opcode::kSyncfs, testing::Wire().U64(0x0102030405060708));
  EXPECT_EQ(op.in.padding, 0x0102030405060708u);
}

TEST_F(GoldenRequest, TmpfileReadsTheCreateStructAndTheName) {
  const auto op = Parse<op::Tmpfile>(Opcode::kTmpfile, CreateInWire().CString("tmp-dir-name"));
  ExpectCreateIn(op.in);
  EXPECT_EQ(op.name, "tmp-dir-name");
}

TEST_F(GoldenRequest, StatxReadsEveryField) {
  testing::Wire body;
  body.U32(0x00000001)          // getattr_flags
      .U32(0x0000a7a7)          // reserved
      .U64(0x00000000000000f8)  // fh
      .U32(0x00000800)          // sx_flags
      .U32(0x00000fff);         // sx_mask
  const auto op = Parse<op::Statx>(Opcode::kStatx, body);
  EXPECT_EQ(op.in.getattr_flags, 1u);
  EXPECT_EQ(op.in.reserved, 0xa7a7u);
  EXPECT_EQ(op.in.fh, 0xf8u);
  EXPECT_EQ(op.in.sx_flags, 0x800u);
  EXPECT_EQ(op.in.sx_mask, 0xfffu);
}

// CREATE "grouped" with a FUSE_EXT_GROUPS extension of two groups: 8 + 4 + 2 * 4 = 20 bytes,
// padded to 24, so total_extlen is 3.
testing::Wire CreateWithGroupsBody() {
  testing::Wire wire = CreateInWire();
  wire.CString("grouped")
      .U32(24)  // ext size, header included
      .U32(32)  // FUSE_EXT_GROUPS
      .U32(2)   // nr_groups
      .U32(0x000003e8)
      .U32(0x00fedcba)
      .Zeros(4);
  return wire;
}

TEST_F(GoldenRequest, CreateWithGroupsExtensionExposesTheSupplementaryGroups) {
  const auto op = Parse<op::Create>(Opcode::kCreate, CreateWithGroupsBody(), ParseContext{}, 3);
  ExpectCreateIn(op.in);
  EXPECT_EQ(op.name, "grouped");
  const Extensions& ext = request_.extensions;
  ASSERT_EQ(ext.supp_groups.size(), 2u);
  EXPECT_EQ(ext.supp_groups[0], 0x3e8u);
  EXPECT_EQ(ext.supp_groups[1], 0xfedcbau);
  EXPECT_EQ(ext.raw.size(), 24u);
  EXPECT_EQ(ext.raw.data(), message_.data() + message_.size() - 24);
  EXPECT_TRUE(ext.security_context.empty());
}

// Before 7.38 the field was padding: whatever it holds must not carve bytes off the arguments.
TEST_F(GoldenRequest, TotalExtlenIsIgnoredBeforeMinor38) {
  const auto op =
      Parse<op::Create>(Opcode::kCreate, CreateWithGroupsBody(), ParseContext{.minor = 37}, 3);
  ExpectCreateIn(op.in);
  EXPECT_EQ(op.name, "grouped");
  EXPECT_TRUE(request_.extensions.supp_groups.empty());
  EXPECT_TRUE(request_.extensions.raw.empty());
}

TEST_F(GoldenRequest, RingLookupIgnoresStaleBytesInOpIn) {
  const auto op =
      ParseRing<op::Lookup>(Opcode::kLookup, testing::Wire(), testing::Wire().CString("ring-name"));
  EXPECT_EQ(op.name, "ring-name");
}

TEST_F(GoldenRequest, RingWriteReadsTheStructFromOpInAndTheDataFromThePayload) {
  constexpr std::string_view kData = "ring\0write"sv;
  testing::Wire args;
  args.U64(0x0f0e0d0c0b0a0908)  // fh
      .U64(0x0000000000400000)  // offset
      .U32(kData.size())        // size
      .U32(0x00000007)          // write_flags
      .U64(0x1234123412341234)  // lock_owner
      .U32(0x00000401)          // flags
      .U32(0x00007777);         // padding
  const auto op = ParseRing<op::Write>(Opcode::kWrite, args, testing::Wire().Text(kData));
  EXPECT_EQ(op.in.fh, 0x0f0e0d0c0b0a0908u);
  EXPECT_EQ(op.in.offset, 0x400000u);
  EXPECT_EQ(op.in.size, kData.size());
  EXPECT_EQ(op.in.write_flags, 7u);
  EXPECT_EQ(op.in.lock_owner, 0x1234123412341234u);
  EXPECT_EQ(op.in.flags, 0x401u);
  EXPECT_EQ(op.in.padding, 0x7777u);
  EXPECT_EQ(View(op.data), kData);
  EXPECT_EQ(op.data.data(), payload_.data());
}

TEST_F(GoldenRequest, RingSetxattrReadsTheStructFromOpInAndNameAndValueFromThePayload) {
  constexpr std::string_view kValue = "ring\0value"sv;
  testing::Wire args;
  args.U32(kValue.size())  // size
      .U32(0x00000002)     // flags
      .U32(0x00000001)     // setxattr_flags
      .U32(0x0000e1e1);    // padding
  const auto op = ParseRing<op::Setxattr>(Opcode::kSetxattr, args,
                                          testing::Wire().CString("user.ring").Text(kValue));
  EXPECT_EQ(op.in.size, kValue.size());
  EXPECT_EQ(op.in.flags, 2u);
  EXPECT_EQ(op.in.setxattr_flags, 1u);
  EXPECT_EQ(op.in.padding, 0xe1e1u);
  EXPECT_EQ(op.name, "user.ring");
  EXPECT_EQ(View(op.value), kValue);
}

}  // namespace
}  // namespace ringfuse
