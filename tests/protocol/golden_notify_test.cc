// The nine notifications, encoded and compared with bytes written by hand from the kernel's
// layout: header len = the whole message, error = the notify code, unique = 0.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "ringfuse/notify.h"
#include "tests/protocol/wire.h"

namespace ringfuse {
namespace {

using namespace std::string_view_literals;

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

// The notification's out header followed by `body`.
std::string Expected(int32_t code, const testing::Wire& body) {
  return Hex(testing::ReplyMessage(/*unique=*/0, code, body));
}

// The message as CopyTo writes it, after checking that size() and Gather() agree with it.
std::string Encoded(const Notification& notification) {
  std::vector<std::byte> copied(notification.size() + 8, std::byte{0xaa});
  const size_t written = notification.CopyTo(copied);
  EXPECT_EQ(written, notification.size());
  copied.resize(written);

  std::array<ConstBytes, Notification::kMaxParts> parts;
  const size_t count = notification.Gather(parts);
  EXPECT_GE(count, 1u);
  EXPECT_LE(count, Notification::kMaxParts);
  std::vector<std::byte> gathered;
  for (size_t i = 0; i < count; ++i)
    gathered.insert(gathered.end(), parts[i].begin(), parts[i].end());
  EXPECT_EQ(Hex(gathered), Hex(copied)) << "Gather() and CopyTo() disagree";
  return Hex(copied);
}

TEST(GoldenNotify, PollCarriesTheKernelHandle) {
  const Notification n = Notification::Poll(0x0123456789abcdef);
  EXPECT_EQ(n.code(), wire::NotifyCode::kPoll);
  EXPECT_EQ(Encoded(n), Expected(1, testing::Wire().U64(0x0123456789abcdef)));
}

TEST(GoldenNotify, InvalInodeCarriesInodeOffsetAndLength) {
  const Notification n = Notification::InvalInode(0x00000000000a0b0c, -1, 0x0000000000123000);
  EXPECT_EQ(n.code(), wire::NotifyCode::kInvalInode);
  testing::Wire body;
  body.U64(0x00000000000a0b0c)   // ino
      .I64(-1)                   // off
      .I64(0x0000000000123000);  // len
  EXPECT_EQ(Encoded(n), Expected(2, body));
}

TEST(GoldenNotify, InvalEntryCarriesParentNameLengthFlagsAndTheNulTerminatedName) {
  const absl::StatusOr<Notification> n = Notification::InvalEntry(0x00000000000d0e0f, "entry");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->code(), wire::NotifyCode::kInvalEntry);
  testing::Wire body;
  body.U64(0x00000000000d0e0f)  // parent
      .U32(5)                   // namelen, NUL excluded
      .U32(0)                   // flags
      .CString("entry");
  EXPECT_EQ(Encoded(*n), Expected(3, body));
}

TEST(GoldenNotify, InvalEntryWithExpireOnlySetsTheFlag) {
  const absl::StatusOr<Notification> n =
      Notification::InvalEntry(0x0000000000000042, "expire-me", wire::kExpireOnly);
  ASSERT_TRUE(n.ok()) << n.status();
  testing::Wire body;
  body.U64(0x42)
      .U32(9)
      .U32(1)  // FUSE_EXPIRE_ONLY
      .CString("expire-me");
  EXPECT_EQ(Encoded(*n), Expected(3, body));
}

TEST(GoldenNotify, StoreCarriesNodeOffsetSizeAndTheData) {
  constexpr std::string_view kData = "stored\0bytes"sv;
  const absl::StatusOr<Notification> n =
      Notification::Store(0x0000000000000777, 0x0000000000003000, AsBytes(kData));
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->code(), wire::NotifyCode::kStore);
  testing::Wire body;
  body.U64(0x777)   // nodeid
      .U64(0x3000)  // offset
      .U32(12)      // size
      .U32(0)       // padding
      .Text(kData);
  EXPECT_EQ(Encoded(*n), Expected(4, body));
}

TEST(GoldenNotify, RetrieveCarriesNotifyUniqueNodeOffsetAndSize) {
  const Notification n =
      Notification::Retrieve(0x00000000bbbbcccc, 0x0000000000000888, 0x0000000000005000, 0x2000);
  EXPECT_EQ(n.code(), wire::NotifyCode::kRetrieve);
  testing::Wire body;
  body.U64(0xbbbbcccc)  // notify_unique
      .U64(0x888)       // nodeid
      .U64(0x5000)      // offset
      .U32(0x2000)      // size
      .U32(0);          // padding
  EXPECT_EQ(Encoded(n), Expected(5, body));
}

TEST(GoldenNotify, DeleteCarriesParentChildNameLengthAndTheNulTerminatedName) {
  const absl::StatusOr<Notification> n =
      Notification::Delete(0x0000000000000101, 0x0000000000000202, "deleted");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->code(), wire::NotifyCode::kDelete);
  testing::Wire body;
  body.U64(0x101)  // parent
      .U64(0x202)  // child
      .U32(7)      // namelen
      .U32(0)      // padding
      .CString("deleted");
  EXPECT_EQ(Encoded(*n), Expected(6, body));
}

TEST(GoldenNotify, ResendIsTheHeaderAlone) {
  const Notification n = Notification::Resend();
  EXPECT_EQ(n.code(), wire::NotifyCode::kResend);
  EXPECT_EQ(Encoded(n), Expected(7, testing::Wire()));
}

TEST(GoldenNotify, IncEpochIsExactlySixteenHeaderBytes) {
  const Notification n = Notification::IncEpoch();
  EXPECT_EQ(n.code(), wire::NotifyCode::kIncEpoch);
  const std::vector<std::byte> exact = {std::byte{0x10}, std::byte{0}, std::byte{0}, std::byte{0},
                                        std::byte{0x08}, std::byte{0}, std::byte{0}, std::byte{0},
                                        std::byte{0},    std::byte{0}, std::byte{0}, std::byte{0},
                                        std::byte{0},    std::byte{0}, std::byte{0}, std::byte{0}};
  EXPECT_EQ(Encoded(n), Hex(exact));
}

TEST(GoldenNotify, PruneCarriesTheCountThenTheNodeIds) {
  const uint64_t ids[] = {0x0000000000000011, 0x2200000000000022, 0x0000003300000033};
  const absl::StatusOr<Notification> n = Notification::Prune(ids);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->code(), wire::NotifyCode::kPrune);
  testing::Wire body;
  body.U32(3)  // count
      .U32(0)  // padding
      .U64(0)  // spare
      .U64(0x0000000000000011)
      .U64(0x2200000000000022)
      .U64(0x0000003300000033);
  EXPECT_EQ(Encoded(*n), Expected(9, body));
}

TEST(GoldenNotify, PruneWithNoIdsIsTheHeaderAndAZeroCount) {
  const absl::StatusOr<Notification> n = Notification::Prune({});
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(Encoded(*n), Expected(9, testing::Wire().U32(0).U32(0).U64(0)));
}

TEST(GoldenNotify, CopyToWritesNothingIntoATooSmallBuffer) {
  const absl::StatusOr<Notification> n = Notification::Delete(1, 2, "name");
  ASSERT_TRUE(n.ok()) << n.status();
  std::vector<std::byte> out(n->size() - 1, std::byte{0xaa});
  EXPECT_EQ(n->CopyTo(out), 0u);
  EXPECT_EQ(out, std::vector<std::byte>(n->size() - 1, std::byte{0xaa}));
}

TEST(GoldenNotify, NamesOfOneTo1024BytesAreAccepted) {
  EXPECT_TRUE(Notification::InvalEntry(1, "x").ok());
  EXPECT_TRUE(Notification::InvalEntry(1, std::string(1024, 'n')).ok());
  EXPECT_TRUE(Notification::Delete(1, 2, std::string(1024, 'n')).ok());
}

TEST(GoldenNotify, InvalEntryRejectsEmptyNulAndOverlongNames) {
  EXPECT_FALSE(Notification::InvalEntry(1, "").ok());
  EXPECT_FALSE(Notification::InvalEntry(1, "a\0b"sv).ok());
  EXPECT_FALSE(Notification::InvalEntry(1, std::string(1025, 'n')).ok());
}

TEST(GoldenNotify, DeleteRejectsEmptyNulAndOverlongNames) {
  EXPECT_FALSE(Notification::Delete(1, 2, "").ok());
  EXPECT_FALSE(Notification::Delete(1, 2, "a\0b"sv).ok());
  EXPECT_FALSE(Notification::Delete(1, 2, std::string(1025, 'n')).ok());
}

TEST(GoldenNotify, MinimumMinorsMatchTheKernelChangelog) {
  EXPECT_EQ(NotifyMinimumMinor(wire::NotifyCode::kPoll), 11u);
  EXPECT_EQ(NotifyMinimumMinor(wire::NotifyCode::kInvalInode), 12u);
  EXPECT_EQ(NotifyMinimumMinor(wire::NotifyCode::kStore), 15u);
  EXPECT_EQ(NotifyMinimumMinor(wire::NotifyCode::kDelete), 18u);
  EXPECT_EQ(NotifyMinimumMinor(wire::NotifyCode::kResend), 40u);
  EXPECT_EQ(NotifyMinimumMinor(wire::NotifyCode::kIncEpoch), 44u);
  EXPECT_EQ(NotifyMinimumMinor(wire::NotifyCode::kPrune), 45u);
}

}  // namespace
}  // namespace ringfuse
