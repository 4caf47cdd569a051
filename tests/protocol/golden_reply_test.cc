// Every kind of reply, sent through its typed class and compared with bytes written by hand from
// the kernel's layout; plus the token's answer-exactly-once rules and the directory packer.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ringfuse/protocol/reply_channel.h"
#include "ringfuse/reply.h"
#include "tests/protocol/wire.h"

namespace ringfuse {
namespace {

using namespace std::string_view_literals;

constexpr uint64_t kUnique = 0x0123456789abcdef;
constexpr uint64_t kSlot = 0x5107;

std::string Hex(ConstBytes bytes) {
  std::string text;
  for (size_t i = 0; i < bytes.size(); ++i) {
    char byte[4];
    std::snprintf(byte, sizeof(byte), "%02x", static_cast<unsigned>(bytes[i]));
    text += (i == 0 ? "" : i % 8 == 0 ? " | " : " ");
    text += byte;
  }
  return text;
}

// What a transport would write to /dev/fuse: every reply encoded with EncodeReplyMessage into a
// buffer exactly as large as the header plus the concatenated body parts.
class RecordingChannel : public ReplyChannel {
 public:
  struct Sent {
    ReplyTarget target;
    int32_t error;
    std::vector<std::byte> message;
  };

  void SendReply(const ReplyTarget& target, int32_t error,
                 std::span<const ConstBytes> body) override {
    size_t size = 16;
    for (ConstBytes part : body) size += part.size();
    std::vector<std::byte> message(size, std::byte{0xcc});
    const size_t written = EncodeReplyMessage(target.unique, error, body, message);
    EXPECT_NE(written, 0u);
    message.resize(written);
    sent.push_back({target, error, std::move(message)});
  }

  ReplyToken Token() { return Promise(ReplyTarget{kUnique, kSlot}); }

  // The one message sent, as hex; fails unless exactly one reply went out.
  std::string Only() const {
    EXPECT_EQ(sent.size(), 1u);
    return sent.empty() ? "" : Hex(sent.front().message);
  }

  std::vector<Sent> sent;
};

std::string Expected(const testing::Wire& body, int32_t error = 0) {
  return Hex(testing::ReplyMessage(kUnique, error, body));
}

// An attribute set with a distinct value in every field, and its hand-written wire form.
wire::Attr TestAttr() {
  wire::Attr attr{};
  attr.ino = 0x1000000000000011;
  attr.size = 0x2000000000000022;
  attr.blocks = 0x3000000000000033;
  attr.atime = 0x4000000000000044;
  attr.mtime = 0x5000000000000055;
  attr.ctime = 0x6000000000000066;
  attr.atimensec = 0x71717171;
  attr.mtimensec = 0x72727272;
  attr.ctimensec = 0x73737373;
  attr.mode = 0x000081a4;
  attr.nlink = 0x75757575;
  attr.uid = 0x76767676;
  attr.gid = 0x77777777;
  attr.rdev = 0x78787878;
  attr.blksize = 0x79797979;
  attr.flags = 0x00000002;
  return attr;
}

testing::Wire& TestAttrWire(testing::Wire& wire) {
  return wire.U64(0x1000000000000011)
      .U64(0x2000000000000022)
      .U64(0x3000000000000033)
      .U64(0x4000000000000044)
      .U64(0x5000000000000055)
      .U64(0x6000000000000066)
      .U32(0x71717171)
      .U32(0x72727272)
      .U32(0x73737373)
      .U32(0x000081a4)
      .U32(0x75757575)
      .U32(0x76767676)
      .U32(0x77777777)
      .U32(0x78787878)
      .U32(0x79797979)
      .U32(0x00000002);
}

wire::EntryOut TestEntry() {
  return MakeEntry(0x00000000000a0001, 0x00000000000b0002, TestAttr(), Timeout{0x111, 0x222},
                   Timeout{0x333, 0x444});
}

testing::Wire& TestEntryWire(testing::Wire& wire) {
  wire.U64(0x00000000000a0001)  // nodeid
      .U64(0x00000000000b0002)  // generation
      .U64(0x111)               // entry_valid
      .U64(0x333)               // attr_valid
      .U32(0x222)               // entry_valid_nsec
      .U32(0x444);              // attr_valid_nsec
  return TestAttrWire(wire);
}

class GoldenReply : public ::testing::Test {
 protected:
  RecordingChannel channel_;
};

TEST_F(GoldenReply, EntryReplySendsEntryOut) {
  EntryReply(channel_.Token()).Ok(TestEntry());
  testing::Wire body;
  EXPECT_EQ(channel_.Only(), Expected(TestEntryWire(body)));
}

TEST_F(GoldenReply, CreateReplySendsEntryOutThenOpenOut) {
  CreateReply(channel_.Token()).Ok(TestEntry(), MakeOpenOut(0x00000000f00d0001, 0x41, -7));
  testing::Wire body;
  TestEntryWire(body).U64(0x00000000f00d0001).U32(0x41).I32(-7);
  EXPECT_EQ(channel_.Only(), Expected(body));
}

TEST_F(GoldenReply, AttrReplySendsAttrOutWithZeroDummy) {
  AttrReply(channel_.Token()).Ok(MakeAttrOut(TestAttr(), Timeout{0x0000000500000006, 0x7777}));
  testing::Wire body;
  body.U64(0x0000000500000006).U32(0x7777).U32(0);
  EXPECT_EQ(channel_.Only(), Expected(TestAttrWire(body)));
}

TEST_F(GoldenReply, OpenReplySendsFhOpenFlagsAndBackingId) {
  OpenReply(channel_.Token()).Ok(MakeOpenOut(0x0102030405060708, 0x000000a3, 0x0000bcde));
  EXPECT_EQ(channel_.Only(),
            Expected(testing::Wire().U64(0x0102030405060708).U32(0xa3).I32(0xbcde)));
}

TEST_F(GoldenReply, DataReplySendsTheBytesUnchanged) {
  constexpr std::string_view kData = "read\0data\xff"sv;
  DataReply(channel_.Token()).Ok(AsBytes(kData));
  EXPECT_EQ(channel_.Only(), Expected(testing::Wire().Text(kData)));
}

TEST_F(GoldenReply, DataReplyConcatenatesItsParts) {
  const ConstBytes parts[] = {AsBytes("first-"sv), AsBytes(""sv), AsBytes("second"sv)};
  DataReply(channel_.Token()).Ok(parts);
  EXPECT_EQ(channel_.Only(), Expected(testing::Wire().Text("first-second")));
}

TEST_F(GoldenReply, NarrowCountReplySendsWriteOut) {
  CountReply(channel_.Token(), /*wide=*/false).Ok(0x00012345);
  EXPECT_EQ(channel_.Only(), Expected(testing::Wire().U32(0x00012345).U32(0)));
}

TEST_F(GoldenReply, WideCountReplySendsSixtyFourBits) {
  CountReply(channel_.Token(), /*wide=*/true).Ok(0x0000000123456789);
  EXPECT_EQ(channel_.Only(), Expected(testing::Wire().U64(0x0000000123456789)));
}

TEST_F(GoldenReply, StatfsReplySendsKstatfs) {
  wire::Kstatfs st{};
  st.blocks = 0x1000000000000001;
  st.bfree = 0x2000000000000002;
  st.bavail = 0x3000000000000003;
  st.files = 0x4000000000000004;
  st.ffree = 0x5000000000000005;
  st.bsize = 0x00001000;
  st.namelen = 0x000000ff;
  st.frsize = 0x00000200;
  StatfsReply(channel_.Token()).Ok(st);
  testing::Wire body;
  body.U64(0x1000000000000001)  // blocks
      .U64(0x2000000000000002)  // bfree
      .U64(0x3000000000000003)  // bavail
      .U64(0x4000000000000004)  // files
      .U64(0x5000000000000005)  // ffree
      .U32(0x00001000)          // bsize
      .U32(0x000000ff)          // namelen
      .U32(0x00000200)          // frsize
      .U32(0)                   // padding
      .Zeros(24);               // spare[6]
  EXPECT_EQ(channel_.Only(), Expected(body));
}

TEST_F(GoldenReply, XattrSizeReplySendsGetxattrOut) {
  XattrReply(channel_.Token()).Size(0x00abcdef);
  EXPECT_EQ(channel_.Only(), Expected(testing::Wire().U32(0x00abcdef).U32(0)));
}

TEST_F(GoldenReply, XattrDataReplySendsTheValue) {
  XattrReply(channel_.Token()).Data(AsBytes("user.a\0user.b\0"sv));
  EXPECT_EQ(channel_.Only(), Expected(testing::Wire().CString("user.a").CString("user.b")));
}

TEST_F(GoldenReply, LockReplySendsTheLock) {
  LockReply(channel_.Token()).Ok(wire::FileLock{0x100, 0x7fffffffffffffff, 1, 0x4321});
  EXPECT_EQ(channel_.Only(),
            Expected(testing::Wire().U64(0x100).U64(0x7fffffffffffffff).U32(1).U32(0x4321)));
}

TEST_F(GoldenReply, BmapReplySendsTheBlock) {
  BmapReply(channel_.Token()).Ok(0x0000001122334455);
  EXPECT_EQ(channel_.Only(), Expected(testing::Wire().U64(0x0000001122334455)));
}

TEST_F(GoldenReply, IoctlOkSendsResultWithoutIovecsThenTheOutputData) {
  IoctlReply(channel_.Token()).Ok(-0x1234, AsBytes("ioctl\0out"sv));
  testing::Wire body;
  body.I32(-0x1234)  // result
      .U32(0)        // flags
      .U32(0)        // in_iovs
      .U32(0)        // out_iovs
      .Text("ioctl\0out"sv);
  EXPECT_EQ(channel_.Only(), Expected(body));
}

TEST_F(GoldenReply, IoctlRetrySendsTheRetryFlagAndBothIovecArrays) {
  const wire::IoctlIovec in[] = {{0x00007f0000001000, 0x10}, {0x00007f0000002000, 0x20}};
  const wire::IoctlIovec out[] = {{0x00007f0000003000, 0x30}};
  IoctlReply(channel_.Token()).Retry(in, out);
  testing::Wire body;
  body.I32(0)  // result
      .U32(4)  // flags: FUSE_IOCTL_RETRY
      .U32(2)  // in_iovs
      .U32(1)  // out_iovs
      .U64(0x00007f0000001000)
      .U64(0x10)
      .U64(0x00007f0000002000)
      .U64(0x20)
      .U64(0x00007f0000003000)
      .U64(0x30);
  EXPECT_EQ(channel_.Only(), Expected(body));
}

TEST_F(GoldenReply, PollReplySendsRevents) {
  PollReply(channel_.Token()).Ok(0x00000145);
  EXPECT_EQ(channel_.Only(), Expected(testing::Wire().U32(0x145).U32(0)));
}

TEST_F(GoldenReply, LseekReplySendsTheOffset) {
  LseekReply(channel_.Token()).Ok(0x0000000abcdef012);
  EXPECT_EQ(channel_.Only(), Expected(testing::Wire().U64(0x0000000abcdef012)));
}

TEST_F(GoldenReply, StatxReplySendsStatxOut) {
  wire::StatxOut out{};
  out.attr_valid = 0x0000000000000101;
  out.attr_valid_nsec = 0x00000202;
  out.flags = 0x00000003;
  wire::Statx& sx = out.stat;
  sx.mask = 0x00000fff;
  sx.blksize = 0x00001000;
  sx.attributes = 0x0000000000000020;
  sx.nlink = 0x00000004;
  sx.uid = 0x000003e8;
  sx.gid = 0x000003e9;
  sx.mode = 0x81a4;
  sx.ino = 0x1100000000000011;
  sx.size = 0x2200000000000022;
  sx.blocks = 0x3300000000000033;
  sx.attributes_mask = 0x4400000000000044;
  sx.atime = {0x0000000061000001, 0x00000011, 0};
  sx.btime = {-2, 0x00000022, 0};
  sx.ctime = {0x0000000063000003, 0x00000033, 0};
  sx.mtime = {0x0000000064000004, 0x00000044, 0};
  sx.rdev_major = 0x00000008;
  sx.rdev_minor = 0x00000009;
  sx.dev_major = 0x0000000a;
  sx.dev_minor = 0x0000000b;
  StatxReply(channel_.Token()).Ok(out);
  testing::Wire body;
  body.U64(0x101)               // attr_valid
      .U32(0x202)               // attr_valid_nsec
      .U32(3)                   // flags
      .Zeros(16)                // spare[2]
      .U32(0xfff)               // mask
      .U32(0x1000)              // blksize
      .U64(0x20)                // attributes
      .U32(4)                   // nlink
      .U32(1000)                // uid
      .U32(1001)                // gid
      .U16(0x81a4)              // mode
      .U16(0)                   // spare0
      .U64(0x1100000000000011)  // ino
      .U64(0x2200000000000022)  // size
      .U64(0x3300000000000033)  // blocks
      .U64(0x4400000000000044)  // attributes_mask
      .I64(0x0000000061000001)  // atime: tv_sec, tv_nsec, reserved
      .U32(0x11)
      .I32(0)
      .I64(-2)  // btime
      .U32(0x22)
      .I32(0)
      .I64(0x0000000063000003)  // ctime
      .U32(0x33)
      .I32(0)
      .I64(0x0000000064000004)  // mtime
      .U32(0x44)
      .I32(0)
      .U32(8)          // rdev_major
      .U32(9)          // rdev_minor
      .U32(10)         // dev_major
      .U32(11)         // dev_minor
      .Zeros(14 * 8);  // spare2
  EXPECT_EQ(channel_.Only(), Expected(body));
}

TEST_F(GoldenReply, EmptyReplySendsTheHeaderAlone) {
  EmptyReply(channel_.Token()).Ok();
  EXPECT_EQ(channel_.Only(), Hex(testing::Wire().U32(16).I32(0).U64(kUnique).bytes()));
}

TEST_F(GoldenReply, ErrorSendsTheHeaderAloneWithTheNegatedErrno) {
  EntryReply(channel_.Token()).Error(ENOENT);
  EXPECT_EQ(channel_.Only(), Hex(testing::Wire().U32(16).I32(-2).U64(kUnique).bytes()));
  EXPECT_EQ(channel_.sent.front().target.slot, kSlot);
}

TEST_F(GoldenReply, EncodeReplyMessageIgnoresTheBodyOfAnError) {
  const ConstBytes body[] = {AsBytes("ignored"sv)};
  std::vector<std::byte> out(64);
  ASSERT_EQ(EncodeReplyMessage(kUnique, -ENOENT, body, out), 16u);
  out.resize(16);
  EXPECT_EQ(Hex(out), Hex(testing::Wire().U32(16).I32(-2).U64(kUnique).bytes()));
}

TEST_F(GoldenReply, EncodeReplyMessageWritesNothingIntoATooSmallBuffer) {
  const ConstBytes body[] = {AsBytes("twelve bytes"sv)};
  std::vector<std::byte> out(27, std::byte{0xaa});
  EXPECT_EQ(EncodeReplyMessage(kUnique, 0, body, out), 0u);
  EXPECT_EQ(out, std::vector<std::byte>(27, std::byte{0xaa}));
}

TEST(KernelError, NegatesErrnosTheKernelAccepts) {
  EXPECT_EQ(KernelError(1), -1);
  EXPECT_EQ(KernelError(ENOENT), -ENOENT);
  EXPECT_EQ(KernelError(511), -511);
}

TEST(KernelError, MapsZeroNegativeAndTooLargeToEio) {
  EXPECT_EQ(KernelError(0), -EIO);
  EXPECT_EQ(KernelError(-1), -EIO);
  EXPECT_EQ(KernelError(-ENOENT), -EIO);
  EXPECT_EQ(KernelError(512), -EIO);  // ERESTARTSYS: the kernel rejects it
  EXPECT_EQ(KernelError(100000), -EIO);
}

TEST_F(GoldenReply, ErrorZeroIsSentAsEio) {
  EmptyReply(channel_.Token()).Error(0);
  ASSERT_EQ(channel_.sent.size(), 1u);
  EXPECT_EQ(channel_.sent.front().error, -EIO);
}

TEST_F(GoldenReply, TokenDestroyedWithoutAnswerSendsEioExactlyOnce) {
  { ReplyToken token = channel_.Token(); }
  EXPECT_EQ(channel_.Only(), Hex(testing::Wire().U32(16).I32(-EIO).U64(kUnique).bytes()));
}

TEST_F(GoldenReply, TypedReplyDroppedWithoutAnswerSendsEio) {
  { AttrReply reply(channel_.Token()); }
  ASSERT_EQ(channel_.sent.size(), 1u);
  EXPECT_EQ(channel_.sent.front().error, -EIO);
}

TEST_F(GoldenReply, AnsweredTokenSendsNothingMore) {
  {
    ReplyToken token = channel_.Token();
    token.Error(ENOENT);
    EXPECT_FALSE(token.pending());
    token.Error(EPERM);
    token.Send(std::span<const ConstBytes>{});
  }
  ASSERT_EQ(channel_.sent.size(), 1u);
  EXPECT_EQ(channel_.sent.front().error, -ENOENT);
}

TEST_F(GoldenReply, MovedFromTokenSendsNothing) {
  ReplyToken kept;
  {
    ReplyToken original = channel_.Token();
    kept = std::move(original);
    EXPECT_FALSE(original.pending());
  }
  EXPECT_TRUE(channel_.sent.empty());
  EXPECT_TRUE(kept.pending());
  EXPECT_EQ(kept.unique(), kUnique);
  kept.Error(EACCES);
  ASSERT_EQ(channel_.sent.size(), 1u);
  EXPECT_EQ(channel_.sent.front().error, -EACCES);
}

TEST_F(GoldenReply, MoveConstructedTokenTakesOverTheAnswer) {
  {
    ReplyToken original = channel_.Token();
    ReplyToken moved(std::move(original));
    EXPECT_FALSE(original.pending());
    EXPECT_TRUE(moved.pending());
  }
  ASSERT_EQ(channel_.sent.size(), 1u);
  EXPECT_EQ(channel_.sent.front().error, -EIO);
}

// A READDIR record: ino u64, off u64, namelen u32, type u32, name, zeros to a multiple of 8.
testing::Wire& DirentWire(testing::Wire& wire, uint64_t ino, uint64_t off, uint32_t type,
                          std::string_view name, size_t padding) {
  return wire.U64(ino).U64(off).U32(name.size()).U32(type).Text(name).Zeros(padding);
}

TEST(DirentPacker, PacksReaddirRecordsAlignedToEightWithZeroedPadding) {
  std::vector<std::byte> buffer(256, std::byte{0xaa});
  DirentPacker packer(buffer);
  ASSERT_TRUE(packer.Add(0x101, 1, 4, "a"));
  ASSERT_TRUE(packer.Add(0x102, 2, 8, "seven77"));
  ASSERT_TRUE(packer.Add(0x103, 3, 10, "eight888"));
  ASSERT_TRUE(packer.Add(0x104, 0x7fffffffffffffff, 1, "nine99999"));
  testing::Wire expected;
  DirentWire(expected, 0x101, 1, 4, "a", 7);                           // 25 -> 32
  DirentWire(expected, 0x102, 2, 8, "seven77", 1);                     // 31 -> 32
  DirentWire(expected, 0x103, 3, 10, "eight888", 0);                   // 32 -> 32
  DirentWire(expected, 0x104, 0x7fffffffffffffff, 1, "nine99999", 7);  // 33 -> 40
  EXPECT_EQ(Hex(packer.packed()), Hex(expected.bytes()));
  EXPECT_EQ(packer.count(), 4u);
}

wire::EntryOut PlusEntry(uint64_t n) {
  wire::Attr attr = TestAttr();
  attr.ino = 0xa00 + n;
  return MakeEntry(0xb00 + n, 0xc00 + n, attr, Timeout{n, uint32_t(n + 1)},
                   Timeout{n + 2, uint32_t(n + 3)});
}

// A READDIRPLUS record: entry_out (dirent ino = the entry's attr.ino), then a READDIR record.
testing::Wire& DirentPlusWire(testing::Wire& wire, uint64_t n, uint64_t off, uint32_t type,
                              std::string_view name, size_t padding) {
  wire.U64(0xb00 + n).U64(0xc00 + n).U64(n).U64(n + 2).U32(n + 1).U32(n + 3);
  testing::Wire attr;
  TestAttrWire(attr);
  // Replace the ino at the start of the hand-written attr with this entry's.
  wire.U64(0xa00 + n).Append(std::vector<std::byte>(attr.bytes().begin() + 8, attr.bytes().end()));
  return DirentWire(wire, 0xa00 + n, off, type, name, padding);
}

TEST(DirentPacker, PacksReaddirplusRecordsAlignedToEightWithZeroedPadding) {
  std::vector<std::byte> buffer(1024, std::byte{0xaa});
  DirentPacker packer(buffer);
  ASSERT_TRUE(packer.AddPlus(PlusEntry(1), 11, 4, "b"));
  ASSERT_TRUE(packer.AddPlus(PlusEntry(2), 12, 8, "seven77"));
  ASSERT_TRUE(packer.AddPlus(PlusEntry(3), 13, 10, "eight888"));
  ASSERT_TRUE(packer.AddPlus(PlusEntry(4), 14, 1, "nine99999"));
  testing::Wire expected;
  DirentPlusWire(expected, 1, 11, 4, "b", 7);          // 153 -> 160
  DirentPlusWire(expected, 2, 12, 8, "seven77", 1);    // 159 -> 160
  DirentPlusWire(expected, 3, 13, 10, "eight888", 0);  // 160 -> 160
  DirentPlusWire(expected, 4, 14, 1, "nine99999", 7);  // 161 -> 168
  EXPECT_EQ(Hex(packer.packed()), Hex(expected.bytes()));
  EXPECT_EQ(packer.count(), 4u);
}

TEST(DirentPacker, RecordSizesRoundUpToEight) {
  EXPECT_EQ(DirentPacker::DirentSize(1), 32u);
  EXPECT_EQ(DirentPacker::DirentSize(8), 32u);
  EXPECT_EQ(DirentPacker::DirentSize(9), 40u);
  EXPECT_EQ(DirentPacker::DirentPlusSize(1), 160u);
  EXPECT_EQ(DirentPacker::DirentPlusSize(8), 160u);
  EXPECT_EQ(DirentPacker::DirentPlusSize(9), 168u);
}

TEST(DirentPacker, RefusesARecordThatDoesNotFitAndWritesNothing) {
  std::vector<std::byte> buffer(71, std::byte{0xaa});
  DirentPacker packer(buffer);
  ASSERT_TRUE(packer.Add(1, 1, 8, "a"));  // 32 bytes
  const std::string before = Hex(packer.packed());
  EXPECT_FALSE(packer.Add(2, 2, 8, "nine99999"));  // 40 bytes: one short
  EXPECT_EQ(Hex(packer.packed()), before);
  EXPECT_EQ(packer.count(), 1u);
  EXPECT_EQ(std::vector<std::byte>(buffer.begin() + 32, buffer.end()),
            std::vector<std::byte>(39, std::byte{0xaa}));
  EXPECT_TRUE(packer.Add(3, 3, 8, "b"));  // a smaller record still fits
}

TEST(DirentPacker, RefusesAPlusRecordThatDoesNotFitAndWritesNothing) {
  std::vector<std::byte> buffer(160 + 159, std::byte{0xaa});
  DirentPacker packer(buffer);
  ASSERT_TRUE(packer.AddPlus(PlusEntry(1), 1, 8, "a"));
  EXPECT_FALSE(packer.AddPlus(PlusEntry(2), 2, 8, "b"));
  EXPECT_EQ(packer.packed().size(), 160u);
  EXPECT_EQ(packer.count(), 1u);
  EXPECT_EQ(std::vector<std::byte>(buffer.begin() + 160, buffer.end()),
            std::vector<std::byte>(159, std::byte{0xaa}));
}

TEST(DirentPacker, FillsTheBufferExactly) {
  std::vector<std::byte> buffer(32 + 40);
  DirentPacker packer(buffer);
  EXPECT_TRUE(packer.Add(1, 1, 8, "eight888"));
  EXPECT_TRUE(packer.Add(2, 2, 8, "nine99999"));
  EXPECT_EQ(packer.packed().size(), buffer.size());
  EXPECT_FALSE(packer.Add(3, 3, 8, "z"));
  EXPECT_EQ(packer.count(), 2u);
}

TEST(DirentPacker, SkipsNamesTheKernelWouldRejectAndKeepsPacking) {
  std::vector<std::byte> buffer(2048);
  DirentPacker packer(buffer);
  EXPECT_TRUE(packer.Add(1, 1, 8, ""));
  EXPECT_TRUE(packer.Add(2, 2, 8, "a/b"));
  EXPECT_TRUE(packer.Add(3, 3, 8, std::string_view("a\0b", 3)));
  EXPECT_TRUE(packer.Add(4, 4, 8, std::string(1025, 'n')));
  EXPECT_EQ(packer.packed().size(), 0u);
  EXPECT_EQ(packer.skipped(), 4u);
  EXPECT_TRUE(packer.Add(5, 5, 8, std::string(1024, 'n')));  // the longest valid name
  EXPECT_TRUE(packer.Add(6, 6, 8, "ok"));
  EXPECT_EQ(packer.count(), 2u);
  EXPECT_EQ(packer.packed().size(), DirentPacker::DirentSize(1024) + DirentPacker::DirentSize(2));
}

TEST(DirentPacker, PlusFillsTheBufferExactly) {
  std::vector<std::byte> buffer(168);
  DirentPacker packer(buffer);
  EXPECT_TRUE(packer.AddPlus(PlusEntry(1), 1, 8, "nine99999"));
  EXPECT_EQ(packer.packed().size(), buffer.size());
  EXPECT_FALSE(packer.AddPlus(PlusEntry(2), 2, 8, "a"));
}

TEST_F(GoldenReply, ReaddirSendsThePackedRecords) {
  std::vector<std::byte> buffer(64);
  DirentPacker packer(buffer);
  ASSERT_TRUE(packer.Add(0x77, 1, 4, "dir"));
  DataReply(channel_.Token()).Ok(packer.packed());
  testing::Wire body;
  EXPECT_EQ(channel_.Only(), Expected(DirentWire(body, 0x77, 1, 4, "dir", 5)));
}

TEST(AttrFromStat, MapsEveryStatField) {
  struct stat st {};
  st.st_ino = 0x1000000000000011;
  st.st_size = 0x2000000000000022;
  st.st_blocks = 0x3000000000000033;
  st.st_atim = {0x4000000000000044, 0x71717171};
  st.st_mtim = {0x5000000000000055, 0x72727272};
  st.st_ctim = {0x6000000000000066, 0x73737373};
  st.st_mode = 0x000081a4;
  st.st_nlink = 0x75757575;
  st.st_uid = 0x76767676;
  st.st_gid = 0x77777777;
  st.st_rdev = 0x78787878;
  st.st_blksize = 0x79797979;
  const wire::Attr attr = AttrFromStat(st);
  testing::Wire expected;
  TestAttrWire(expected);
  std::vector<std::byte> want = expected.bytes();
  want[84] = std::byte{0};  // flags: a stat has none
  EXPECT_EQ(Hex(AsBytes(attr)), Hex(want));
}

TEST(MakeEntry, PutsEachTimeoutInItsOwnField) {
  const wire::EntryOut entry = TestEntry();
  EXPECT_EQ(entry.nodeid, 0xa0001u);
  EXPECT_EQ(entry.generation, 0xb0002u);
  EXPECT_EQ(entry.entry_valid, 0x111u);
  EXPECT_EQ(entry.entry_valid_nsec, 0x222u);
  EXPECT_EQ(entry.attr_valid, 0x333u);
  EXPECT_EQ(entry.attr_valid_nsec, 0x444u);
  testing::Wire attr;
  EXPECT_EQ(Hex(AsBytes(entry.attr)), Hex(TestAttrWire(attr).bytes()));
}

TEST(MakeEntry, NegativeEntryHasNodeidZeroAndOnlyAnEntryTimeout) {
  const wire::EntryOut entry = MakeNegativeEntry(Timeout{5, 6});
  testing::Wire expected;
  expected.U64(0).U64(0).U64(5).U64(0).U32(6).U32(0).Zeros(88);
  EXPECT_EQ(Hex(AsBytes(entry)), Hex(expected.bytes()));
}

TEST(MakeAttrOut, PutsTheTimeoutAndAttrInPlace) {
  const wire::AttrOut out = MakeAttrOut(TestAttr(), Timeout{0x0000000900000008, 0x7});
  EXPECT_EQ(out.attr_valid, 0x0000000900000008u);
  EXPECT_EQ(out.attr_valid_nsec, 7u);
  EXPECT_EQ(out.dummy, 0u);
  testing::Wire attr;
  EXPECT_EQ(Hex(AsBytes(out.attr)), Hex(TestAttrWire(attr).bytes()));
}

}  // namespace
}  // namespace ringfuse
