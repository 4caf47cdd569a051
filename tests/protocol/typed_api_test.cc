// The conveniences of the public API over the wire structs: a listing reply that owns its buffer
// and numbers its entries, the op structs' accessors where they decode flags, and timeouts from
// std::chrono.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "ringfuse/protocol/reply_channel.h"
#include "ringfuse/reply.h"
#include "ringfuse/request.h"

namespace ringfuse {
namespace {

// Keeps the body of the one reply sent.
class CapturingChannel : public ReplyChannel {
 public:
  void SendReply(const ReplyTarget&, int32_t error_code,
                 std::span<const ConstBytes> body) override {
    ++replies;
    error = error_code;
    for (ConstBytes part : body) bytes.insert(bytes.end(), part.begin(), part.end());
  }
  ReplyToken Token() { return Promise(ReplyTarget{7, 0}); }

  int replies = 0;
  int32_t error = 0;
  std::vector<std::byte> bytes;
};

struct Listed {
  std::string name;
  uint64_t ino;
  uint64_t next_offset;
  uint32_t type;
};

// Reads back fuse_dirent records (or fuse_direntplus, whose dirent follows an entry_out).
std::vector<Listed> Decode(const std::vector<std::byte>& bytes, bool plus) {
  std::vector<Listed> listed;
  size_t at = 0;
  while (at < bytes.size()) {
    if (plus) at += sizeof(wire::EntryOut);
    wire::Dirent dirent;
    std::memcpy(&dirent, bytes.data() + at, sizeof(dirent));
    const char* name = reinterpret_cast<const char*>(bytes.data() + at + sizeof(dirent));
    listed.push_back({std::string(name, dirent.namelen), dirent.ino, dirent.off, dirent.type});
    at += (sizeof(dirent) + dirent.namelen + 7) / 8 * 8;
  }
  return listed;
}

wire::ReadIn ListingRequest(uint64_t offset, uint32_t size) {
  wire::ReadIn in{};
  in.offset = offset;
  in.size = size;
  return in;
}

TEST(DirReply, NumbersEntriesFromTheRequestsOffset) {
  CapturingChannel channel;
  DirReply reply(channel.Token(), ListingRequest(5, 4096));
  EXPECT_EQ(reply.offset(), 5u);
  EXPECT_TRUE(reply.Add("a", 10, DT_REG));
  EXPECT_TRUE(reply.Add("b", 11, DT_DIR));
  EXPECT_TRUE(reply.AddAt(1000, "c", 12, DT_LNK));
  reply.Ok();
  ASSERT_EQ(channel.replies, 1);
  const std::vector<Listed> listed = Decode(channel.bytes, false);
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].name, "a");
  EXPECT_EQ(listed[0].next_offset, 6u);
  EXPECT_EQ(listed[1].next_offset, 7u);
  EXPECT_EQ(listed[1].type, static_cast<uint32_t>(DT_DIR));
  EXPECT_EQ(listed[2].next_offset, 1000u);
  EXPECT_EQ(listed[2].ino, 12u);
}

TEST(DirReply, RefusesTheEntryThatDoesNotFitAndSendsWhatDid) {
  CapturingChannel channel;
  // One 24-byte dirent with a name of up to 8 bytes fits in 32 bytes, not two.
  DirReply reply(channel.Token(), ListingRequest(0, 32));
  EXPECT_TRUE(reply.Add("first", 2, DT_REG));
  EXPECT_FALSE(reply.Add("second", 3, DT_REG));
  reply.Ok();
  const std::vector<Listed> listed = Decode(channel.bytes, false);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].name, "first");
}

TEST(DirReply, OkWithNothingAddedEndsTheListing) {
  CapturingChannel channel;
  DirReply(channel.Token(), ListingRequest(3, 4096)).Ok();
  EXPECT_EQ(channel.replies, 1);
  EXPECT_EQ(channel.error, 0);
  EXPECT_TRUE(channel.bytes.empty());
}

TEST(DirReply, ASkippedBadNameStillTakesItsPlaceInTheNumbering) {
  CapturingChannel channel;
  DirReply reply(channel.Token(), ListingRequest(0, 4096));
  EXPECT_TRUE(reply.Add("ok", 2, DT_REG));
  reply.Add("bad/name", 3, DT_REG);  // the kernel would fail the whole READDIR with EIO
  EXPECT_TRUE(reply.Add("after", 4, DT_REG));
  reply.Ok();
  const std::vector<Listed> listed = Decode(channel.bytes, false);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1].name, "after");
  EXPECT_EQ(listed[1].next_offset, 3u);  // the third entry of the listing
}

TEST(DirPlusReply, CarriesEachEntrysLookup) {
  CapturingChannel channel;
  DirPlusReply reply(channel.Token(), ListingRequest(0, 4096));
  wire::EntryOut entry{};
  entry.nodeid = 42;
  entry.attr.ino = 42;
  EXPECT_EQ(reply.Add("file", entry, DT_REG), DirPlusReply::Added::kPacked);
  reply.Ok();
  ASSERT_GE(channel.bytes.size(), sizeof(wire::EntryOut));
  wire::EntryOut sent;
  std::memcpy(&sent, channel.bytes.data(), sizeof(sent));
  EXPECT_EQ(sent.nodeid, 42u);
  const std::vector<Listed> listed = Decode(channel.bytes, true);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].name, "file");
  EXPECT_EQ(listed[0].next_offset, 1u);
}

// A handler counts a lookup only for an entry the kernel receives: a skipped name's never comes
// back as a FORGET.
TEST(DirPlusReply, SaysWhichEntriesWereSkippedOrDidNotFit) {
  CapturingChannel channel;
  DirPlusReply reply(channel.Token(), ListingRequest(0, 200));
  wire::EntryOut entry{};
  entry.nodeid = 7;
  EXPECT_EQ(reply.Add("bad/name", entry, DT_REG), DirPlusReply::Added::kSkipped);
  EXPECT_EQ(reply.Add("good", entry, DT_REG), DirPlusReply::Added::kPacked);
  EXPECT_EQ(reply.Add("too-many", entry, DT_REG), DirPlusReply::Added::kFull);
  reply.Ok();
  const std::vector<Listed> listed = Decode(channel.bytes, true);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].name, "good");
}

TEST(SetattrAccessors, AnswerOnlyWhatTheKernelAsksToChange) {
  op::Setattr truncate{};
  truncate.in.valid = wire::kFattrSize | wire::kFattrFh;
  truncate.in.size = 4096;
  truncate.in.fh = 9;
  truncate.in.mode = 0777;  // present in the struct, but not asked for
  EXPECT_EQ(truncate.size(), 4096u);
  EXPECT_EQ(truncate.fh(), 9u);
  EXPECT_FALSE(truncate.mode().has_value());
  EXPECT_FALSE(truncate.uid().has_value());
  EXPECT_FALSE(truncate.atime().has_value());
  EXPECT_FALSE(truncate.kill_suid_gid());
}

TEST(SetattrAccessors, TellANowTimeFromAGivenOne) {
  op::Setattr touch{};
  touch.in.valid = wire::kFattrAtime | wire::kFattrAtimeNow | wire::kFattrMtime;
  touch.in.mtime = 1234;
  touch.in.mtimensec = 5;
  ASSERT_TRUE(touch.atime().has_value());
  EXPECT_TRUE(touch.atime()->now);
  ASSERT_TRUE(touch.mtime().has_value());
  EXPECT_FALSE(touch.mtime()->now);
  EXPECT_EQ(touch.mtime()->seconds, 1234u);
  EXPECT_EQ(touch.mtime()->nanoseconds, 5u);
  EXPECT_FALSE(touch.ctime().has_value());
}

TEST(GetattrAccessors, NameTheOpenFileOnlyWhenTheKernelSaysSo) {
  op::Getattr stat{};
  stat.in.fh = 7;  // a stale value: the flag is clear
  EXPECT_FALSE(stat.fh().has_value());
  op::Getattr fstat{};
  fstat.in.getattr_flags = wire::kGetattrFh;
  fstat.in.fh = 7;
  EXPECT_EQ(fstat.fh(), 7u);
}

TEST(StatxAccessors, NameTheOpenFileOnlyWhenTheKernelSaysSo) {
  op::Statx statx{};
  statx.in.fh = 7;
  EXPECT_FALSE(statx.fh().has_value());
  statx.in.getattr_flags = wire::kGetattrFh;
  EXPECT_EQ(statx.fh(), 7u);
}

TEST(FsyncAccessors, DatasyncIsTheFirstFsyncFlag) {
  op::Fsync fsync{};
  fsync.in.fsync_flags = 0xfffffffe;  // every bit but FDATASYNC
  EXPECT_FALSE(fsync.datasync());
  fsync.in.fsync_flags = wire::kFsyncFdatasync;
  EXPECT_TRUE(fsync.datasync());
  op::Fsyncdir fsyncdir{};
  fsyncdir.in.fsync_flags = wire::kFsyncFdatasync;
  EXPECT_TRUE(fsyncdir.datasync());
}

TEST(ReleaseAccessors, FlushAndTheFlockOwnerComeFromReleaseFlags) {
  op::Release release{};
  release.in.fh = 3;
  release.in.flags = O_RDWR | O_APPEND;
  release.in.lock_owner = 0xabc;  // present, but not flagged valid
  EXPECT_EQ(release.fh(), 3u);
  EXPECT_EQ(release.flags(), O_RDWR | O_APPEND);
  EXPECT_FALSE(release.flush());
  EXPECT_FALSE(release.lock_owner().has_value());

  release.in.release_flags = wire::kReleaseFlush | wire::kReleaseFlockUnlock;
  EXPECT_TRUE(release.flush());
  EXPECT_EQ(release.lock_owner(), 0xabcu);
}

TEST(ReadWriteAccessors, GiveTheLockOwnerOnlyWhenFlaggedValid) {
  op::Read read{};
  read.in.lock_owner = 0x55;
  EXPECT_FALSE(read.lock_owner().has_value());
  read.in.read_flags = wire::kReadLockOwner;
  EXPECT_EQ(read.lock_owner(), 0x55u);

  op::Write write{};
  write.in.lock_owner = 0x66;
  write.in.write_flags = wire::kWriteCache | wire::kWriteKillSuidGid;
  EXPECT_TRUE(write.writeback());
  EXPECT_TRUE(write.kill_suid_gid());
  EXPECT_FALSE(write.lock_owner().has_value());
  write.in.write_flags = wire::kWriteLockOwner;
  EXPECT_FALSE(write.writeback());
  EXPECT_EQ(write.lock_owner(), 0x66u);
}

TEST(PollAccessors, GiveTheKernelHandleOnlyWhenTheCallerWaits) {
  op::Poll poll{};
  poll.in.kh = 42;
  EXPECT_FALSE(poll.kernel_handle().has_value());
  poll.in.flags = wire::kPollScheduleNotify;
  EXPECT_EQ(poll.kernel_handle(), 42u);
}

TEST(Timeout, ComesFromAChronoDuration) {
  const Timeout half = std::chrono::milliseconds(1500);
  EXPECT_EQ(half.seconds, 1u);
  EXPECT_EQ(half.nanoseconds, 500'000'000u);
  const Timeout negative = std::chrono::seconds(-3);
  EXPECT_EQ(negative.seconds, 0u);
  EXPECT_EQ(negative.nanoseconds, 0u);
  const Timeout whole{2};
  EXPECT_EQ(whole.seconds, 2u);
}

// "Cache for centuries" stays long: a count of nanoseconds would overflow into 0 (no caching).
TEST(Timeout, KeepsDurationsTooLongForNanoseconds) {
  const Timeout centuries = std::chrono::hours(24 * 365 * 300);
  EXPECT_EQ(centuries.seconds, uint64_t{24} * 365 * 300 * 3600);
  EXPECT_EQ(centuries.nanoseconds, 0u);
  const Timeout longest = std::chrono::seconds::max();
  EXPECT_EQ(longest.seconds, static_cast<uint64_t>(std::chrono::seconds::max().count()));
  const Timeout huge = std::chrono::duration<double>(1e30);
  EXPECT_EQ(huge.seconds, static_cast<uint64_t>(std::chrono::seconds::max().count()));
  const Timeout fraction = std::chrono::duration<double>(2.25);
  EXPECT_EQ(fraction.seconds, 2u);
  EXPECT_EQ(fraction.nanoseconds, 250'000'000u);
}

}  // namespace
}  // namespace ringfuse
