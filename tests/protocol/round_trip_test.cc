// Encodes replies, directory streams, notifications and INIT answers through the library with
// random values, then decodes the bytes with the independent decoder in test_decoder.h and compares
// every field with what went in.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ringfuse/init.h"
#include "ringfuse/notify.h"
#include "ringfuse/protocol/negotiate.h"
#include "ringfuse/protocol/reply_channel.h"
#include "ringfuse/reply.h"
#include "ringfuse/wire.h"
#include "tests/protocol/test_decoder.h"

namespace ringfuse {
namespace {

using testing::Bytes;
using testing::DecodeOutHeader;
using testing::U32At;
using testing::U64At;

constexpr int kIterations = 300;
constexpr uint64_t kSeed = 0x5eed'f05e'2024'0745;

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}

  uint64_t U64() { return engine_(); }
  uint32_t U32() { return static_cast<uint32_t>(engine_()); }
  uint16_t U16() { return static_cast<uint16_t>(engine_()); }
  int64_t I64() { return static_cast<int64_t>(engine_()); }
  // Uniform in [low, high].
  uint64_t Between(uint64_t low, uint64_t high) {
    return std::uniform_int_distribution<uint64_t>(low, high)(engine_);
  }

  // Every byte random, padding and spare fields included: the encoders must pass them through.
  template <typename T>
  T Struct() {
    std::array<unsigned char, sizeof(T)> raw;
    for (unsigned char& byte : raw) byte = static_cast<unsigned char>(engine_());
    T value;
    std::memcpy(&value, raw.data(), sizeof(T));
    return value;
  }

  std::vector<std::byte> Data(size_t max_size) {
    std::vector<std::byte> data(Between(0, max_size));
    for (std::byte& b : data) b = static_cast<std::byte>(engine_());
    return data;
  }

  // Any bytes but NUL and '/', the two bytes a name cannot hold.
  std::string Name(size_t min_size, size_t max_size) {
    std::string name(Between(min_size, max_size), 'x');
    for (char& c : name) {
      c = static_cast<char>(Between(1, 255));
      if (c == '/') c = 'x';
    }
    return name;
  }

 private:
  std::mt19937_64 engine_;
};

// Encodes each reply into an exactly-sized message with EncodeReplyMessage, as a transport would.
class EncodingChannel : public ReplyChannel {
 public:
  void SendReply(const ReplyTarget& target, int32_t error,
                 std::span<const ConstBytes> body) override {
    ++calls;
    size_t size = testing::kOutHeaderSize;
    for (ConstBytes part : body) size += error == 0 ? part.size() : 0;
    message.assign(size, std::byte{0xee});
    EXPECT_EQ(EncodeReplyMessage(target.unique, error, body, message), size);
  }

  Bytes body() const { return Bytes(message).subspan(testing::kOutHeaderSize); }

  int calls = 0;
  std::vector<std::byte> message;
};

#define EXPECT_FIELD(field) EXPECT_EQ(got.field, want.field) << #field

void ExpectAttr(const testing::DecodedAttr& got, const wire::Attr& want) {
  EXPECT_FIELD(ino);
  EXPECT_FIELD(size);
  EXPECT_FIELD(blocks);
  EXPECT_FIELD(atime);
  EXPECT_FIELD(mtime);
  EXPECT_FIELD(ctime);
  EXPECT_FIELD(atimensec);
  EXPECT_FIELD(mtimensec);
  EXPECT_FIELD(ctimensec);
  EXPECT_FIELD(mode);
  EXPECT_FIELD(nlink);
  EXPECT_FIELD(uid);
  EXPECT_FIELD(gid);
  EXPECT_FIELD(rdev);
  EXPECT_FIELD(blksize);
  EXPECT_FIELD(flags);
}

void ExpectEntryOut(const testing::DecodedEntryOut& got, const wire::EntryOut& want) {
  EXPECT_FIELD(nodeid);
  EXPECT_FIELD(generation);
  EXPECT_FIELD(entry_valid);
  EXPECT_FIELD(attr_valid);
  EXPECT_FIELD(entry_valid_nsec);
  EXPECT_FIELD(attr_valid_nsec);
  ExpectAttr(got.attr, want.attr);
}

void ExpectOpenOut(const testing::DecodedOpenOut& got, const wire::OpenOut& want) {
  EXPECT_FIELD(fh);
  EXPECT_FIELD(open_flags);
  EXPECT_FIELD(backing_id);
}

void ExpectSxTime(const testing::DecodedSxTime& got, const wire::SxTime& want) {
  EXPECT_FIELD(tv_sec);
  EXPECT_FIELD(tv_nsec);
  EXPECT_FIELD(reserved);
}

void ExpectStatxOut(const testing::DecodedStatxOut& got, const wire::StatxOut& want) {
  EXPECT_FIELD(attr_valid);
  EXPECT_FIELD(attr_valid_nsec);
  EXPECT_FIELD(flags);
  EXPECT_FIELD(spare[0]);
  EXPECT_FIELD(spare[1]);
  EXPECT_FIELD(stat.mask);
  EXPECT_FIELD(stat.blksize);
  EXPECT_FIELD(stat.attributes);
  EXPECT_FIELD(stat.nlink);
  EXPECT_FIELD(stat.uid);
  EXPECT_FIELD(stat.gid);
  EXPECT_FIELD(stat.mode);
  EXPECT_EQ(got.stat.spare0, want.stat.spare0[0]);
  EXPECT_FIELD(stat.ino);
  EXPECT_FIELD(stat.size);
  EXPECT_FIELD(stat.blocks);
  EXPECT_FIELD(stat.attributes_mask);
  ExpectSxTime(got.stat.atime, want.stat.atime);
  ExpectSxTime(got.stat.btime, want.stat.btime);
  ExpectSxTime(got.stat.ctime, want.stat.ctime);
  ExpectSxTime(got.stat.mtime, want.stat.mtime);
  EXPECT_FIELD(stat.rdev_major);
  EXPECT_FIELD(stat.rdev_minor);
  EXPECT_FIELD(stat.dev_major);
  EXPECT_FIELD(stat.dev_minor);
  for (size_t i = 0; i < 14; ++i) EXPECT_FIELD(stat.spare2[i]) << i;
}

void ExpectInitOut(const testing::DecodedInitOut& got, const wire::InitOut& want) {
  EXPECT_FIELD(major);
  EXPECT_FIELD(minor);
  EXPECT_FIELD(max_readahead);
  EXPECT_FIELD(flags);
  EXPECT_FIELD(max_background);
  EXPECT_FIELD(congestion_threshold);
  EXPECT_FIELD(max_write);
  EXPECT_FIELD(time_gran);
  EXPECT_FIELD(max_pages);
  EXPECT_FIELD(map_alignment);
  EXPECT_FIELD(flags2);
  EXPECT_FIELD(max_stack_depth);
  EXPECT_FIELD(request_timeout);
  for (size_t i = 0; i < 11; ++i) EXPECT_EQ(got.unused[i], 0) << i;
}

#undef EXPECT_FIELD

// Checks the out header of a successful reply carrying `body_size` bytes.
void ExpectOkHeader(const EncodingChannel& channel, uint64_t unique, size_t body_size) {
  ASSERT_EQ(channel.message.size(), testing::kOutHeaderSize + body_size);
  const testing::DecodedOutHeader header = DecodeOutHeader(channel.message);
  EXPECT_EQ(header.len, testing::kOutHeaderSize + body_size);
  EXPECT_EQ(header.error, 0);
  EXPECT_EQ(header.unique, unique);
}

std::vector<std::byte> Concat(std::span<const ConstBytes> parts) {
  std::vector<std::byte> out;
  for (ConstBytes part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

class RoundTripTest : public ::testing::Test {
 protected:
  // A reply bound to the capturing channel under a fresh random unique.
  template <typename ReplyType, typename... Extra>
  ReplyType Reply(Extra... extra) {
    unique_ = random_.U64();
    return ReplyType(channel_.Promise(ReplyTarget{unique_, 0}), extra...);
  }

  Random random_{kSeed};
  EncodingChannel channel_;
  uint64_t unique_ = 0;
};

TEST_F(RoundTripTest, EntryReplyCarriesEveryFieldOfMakeEntry) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const auto attr = random_.Struct<wire::Attr>();
    const Timeout entry_timeout{random_.U64(), random_.U32()};
    const Timeout attr_timeout{random_.U64(), random_.U32()};
    const uint64_t nodeid = random_.U64();
    const uint64_t generation = random_.U64();
    Reply<EntryReply>().Ok(MakeEntry(nodeid, generation, attr, entry_timeout, attr_timeout));

    ExpectOkHeader(channel_, unique_, testing::kEntryOutSize);
    const testing::DecodedEntryOut got = testing::DecodeEntryOut(channel_.body(), 0);
    EXPECT_EQ(got.nodeid, nodeid);
    EXPECT_EQ(got.generation, generation);
    EXPECT_EQ(got.entry_valid, entry_timeout.seconds);
    EXPECT_EQ(got.entry_valid_nsec, entry_timeout.nanoseconds);
    EXPECT_EQ(got.attr_valid, attr_timeout.seconds);
    EXPECT_EQ(got.attr_valid_nsec, attr_timeout.nanoseconds);
    ExpectAttr(got.attr, attr);
  }
}

TEST_F(RoundTripTest, NegativeEntryHasNodeIdZeroAndTheTimeout) {
  const Timeout timeout{random_.U64(), random_.U32()};
  Reply<EntryReply>().Ok(MakeNegativeEntry(timeout));
  ExpectOkHeader(channel_, unique_, testing::kEntryOutSize);
  const testing::DecodedEntryOut got = testing::DecodeEntryOut(channel_.body(), 0);
  EXPECT_EQ(got.nodeid, 0u);
  EXPECT_EQ(got.entry_valid, timeout.seconds);
  EXPECT_EQ(got.entry_valid_nsec, timeout.nanoseconds);
  ExpectAttr(got.attr, wire::Attr{});
}

TEST_F(RoundTripTest, CreateReplyIsEntryOutThenOpenOut) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const auto entry = random_.Struct<wire::EntryOut>();
    const wire::OpenOut open =
        MakeOpenOut(random_.U64(), random_.U32(), static_cast<int32_t>(random_.U32()));
    Reply<CreateReply>().Ok(entry, open);

    ExpectOkHeader(channel_, unique_, testing::kEntryOutSize + testing::kOpenOutSize);
    ExpectEntryOut(testing::DecodeEntryOut(channel_.body(), 0), entry);
    ExpectOpenOut(testing::DecodeOpenOut(channel_.body(), testing::kEntryOutSize), open);
  }
}

TEST_F(RoundTripTest, AttrReplyCarriesEveryFieldOfMakeAttrOut) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const auto attr = random_.Struct<wire::Attr>();
    const Timeout timeout{random_.U64(), random_.U32()};
    Reply<AttrReply>().Ok(MakeAttrOut(attr, timeout));

    ExpectOkHeader(channel_, unique_, testing::kAttrOutSize);
    const testing::DecodedAttrOut got = testing::DecodeAttrOut(channel_.body(), 0);
    EXPECT_EQ(got.attr_valid, timeout.seconds);
    EXPECT_EQ(got.attr_valid_nsec, timeout.nanoseconds);
    EXPECT_EQ(got.dummy, 0u);
    ExpectAttr(got.attr, attr);
  }
}

TEST_F(RoundTripTest, AttrFromStatCarriesTheStatFields) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    struct stat st {};
    st.st_ino = random_.U64();
    st.st_size = static_cast<off_t>(random_.U64() >> 1);
    st.st_blocks = static_cast<blkcnt_t>(random_.U64() >> 1);
    st.st_atim = {static_cast<time_t>(random_.U32()),
                  static_cast<long>(random_.Between(0, 1e9 - 1))};
    st.st_mtim = {static_cast<time_t>(random_.U32()),
                  static_cast<long>(random_.Between(0, 1e9 - 1))};
    st.st_ctim = {static_cast<time_t>(random_.U32()),
                  static_cast<long>(random_.Between(0, 1e9 - 1))};
    st.st_mode = random_.U32();
    st.st_nlink = random_.U32();
    st.st_uid = random_.U32();
    st.st_gid = random_.U32();
    st.st_rdev = random_.U32();
    st.st_blksize = static_cast<blksize_t>(random_.U32() >> 1);
    Reply<AttrReply>().Ok(MakeAttrOut(AttrFromStat(st), Timeout{}));

    const testing::DecodedAttr got = testing::DecodeAttrOut(channel_.body(), 0).attr;
    EXPECT_EQ(got.ino, st.st_ino);
    EXPECT_EQ(got.size, static_cast<uint64_t>(st.st_size));
    EXPECT_EQ(got.blocks, static_cast<uint64_t>(st.st_blocks));
    EXPECT_EQ(got.atime, static_cast<uint64_t>(st.st_atim.tv_sec));
    EXPECT_EQ(got.mtime, static_cast<uint64_t>(st.st_mtim.tv_sec));
    EXPECT_EQ(got.ctime, static_cast<uint64_t>(st.st_ctim.tv_sec));
    EXPECT_EQ(got.atimensec, static_cast<uint32_t>(st.st_atim.tv_nsec));
    EXPECT_EQ(got.mtimensec, static_cast<uint32_t>(st.st_mtim.tv_nsec));
    EXPECT_EQ(got.ctimensec, static_cast<uint32_t>(st.st_ctim.tv_nsec));
    EXPECT_EQ(got.mode, st.st_mode);
    EXPECT_EQ(got.nlink, st.st_nlink);
    EXPECT_EQ(got.uid, st.st_uid);
    EXPECT_EQ(got.gid, st.st_gid);
    EXPECT_EQ(got.rdev, st.st_rdev);
    EXPECT_EQ(got.blksize, static_cast<uint32_t>(st.st_blksize));
    EXPECT_EQ(got.flags, 0u);
  }
}

TEST_F(RoundTripTest, OpenReplyCarriesFhFlagsAndBackingId) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const uint64_t fh = random_.U64();
    const uint32_t flags = random_.U32();
    const auto backing_id = static_cast<int32_t>(random_.U32());
    Reply<OpenReply>().Ok(MakeOpenOut(fh, flags, backing_id));

    ExpectOkHeader(channel_, unique_, testing::kOpenOutSize);
    ExpectOpenOut(testing::DecodeOpenOut(channel_.body(), 0), wire::OpenOut{fh, flags, backing_id});
  }
}

TEST_F(RoundTripTest, WriteCountIsWriteOutWithZeroPadding) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const uint32_t count = random_.U32();
    Reply<CountReply>(false).Ok(count);

    ExpectOkHeader(channel_, unique_, testing::kU32OutSize);
    const testing::DecodedU32Out got = testing::DecodeU32Out(channel_.body(), 0);
    EXPECT_EQ(got.value, count);
    EXPECT_EQ(got.padding, 0u);
  }
}

TEST_F(RoundTripTest, WideCountIsAWhole64BitCopyFileRangeOut) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const uint64_t count = random_.U64() | (uint64_t{1} << 40);
    Reply<CountReply>(true).Ok(count);

    ExpectOkHeader(channel_, unique_, testing::kU64OutSize);
    EXPECT_EQ(U64At(channel_.body(), 0), count);
  }
}

TEST_F(RoundTripTest, StatfsReplyCarriesEveryKstatfsField) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const auto want = random_.Struct<wire::Kstatfs>();
    Reply<StatfsReply>().Ok(want);

    ExpectOkHeader(channel_, unique_, testing::kStatfsOutSize);
    const testing::DecodedStatfsOut got = testing::DecodeStatfsOut(channel_.body(), 0);
    EXPECT_EQ(got.blocks, want.blocks);
    EXPECT_EQ(got.bfree, want.bfree);
    EXPECT_EQ(got.bavail, want.bavail);
    EXPECT_EQ(got.files, want.files);
    EXPECT_EQ(got.ffree, want.ffree);
    EXPECT_EQ(got.bsize, want.bsize);
    EXPECT_EQ(got.namelen, want.namelen);
    EXPECT_EQ(got.frsize, want.frsize);
    EXPECT_EQ(got.padding, want.padding);
    for (size_t s = 0; s < 6; ++s) EXPECT_EQ(got.spare[s], want.spare[s]) << s;
  }
}

TEST_F(RoundTripTest, XattrSizeIsGetxattrOutAndXattrDataIsRaw) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const uint32_t size = random_.U32();
    Reply<XattrReply>().Size(size);
    ExpectOkHeader(channel_, unique_, testing::kU32OutSize);
    EXPECT_EQ(testing::DecodeU32Out(channel_.body(), 0).value, size);
    EXPECT_EQ(testing::DecodeU32Out(channel_.body(), 0).padding, 0u);

    const std::vector<std::byte> data = random_.Data(300);
    Reply<XattrReply>().Data(data);
    ExpectOkHeader(channel_, unique_, data.size());
    EXPECT_EQ(testing::BytesAt(channel_.body(), 0, data.size()), data);
  }
}

TEST_F(RoundTripTest, LockReplyCarriesTheFileLock) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const auto want = random_.Struct<wire::FileLock>();
    Reply<LockReply>().Ok(want);

    ExpectOkHeader(channel_, unique_, testing::kLkOutSize);
    const testing::DecodedLkOut got = testing::DecodeLkOut(channel_.body(), 0);
    EXPECT_EQ(got.start, want.start);
    EXPECT_EQ(got.end, want.end);
    EXPECT_EQ(got.type, want.type);
    EXPECT_EQ(got.pid, want.pid);
  }
}

TEST_F(RoundTripTest, BmapLseekAndPollRepliesCarryTheirValue) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const uint64_t block = random_.U64();
    Reply<BmapReply>().Ok(block);
    ExpectOkHeader(channel_, unique_, testing::kU64OutSize);
    EXPECT_EQ(U64At(channel_.body(), 0), block);

    const uint64_t offset = random_.U64();
    Reply<LseekReply>().Ok(offset);
    ExpectOkHeader(channel_, unique_, testing::kU64OutSize);
    EXPECT_EQ(U64At(channel_.body(), 0), offset);

    const uint32_t revents = random_.U32();
    Reply<PollReply>().Ok(revents);
    ExpectOkHeader(channel_, unique_, testing::kU32OutSize);
    EXPECT_EQ(testing::DecodeU32Out(channel_.body(), 0).value, revents);
    EXPECT_EQ(testing::DecodeU32Out(channel_.body(), 0).padding, 0u);
  }
}

TEST_F(RoundTripTest, IoctlOkIsIoctlOutThenTheOutputData) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const auto result = static_cast<int32_t>(random_.U32());
    const std::vector<std::byte> data = random_.Data(200);
    Reply<IoctlReply>().Ok(result, data);

    ExpectOkHeader(channel_, unique_, testing::kIoctlOutSize + data.size());
    const testing::DecodedIoctlOut got = testing::DecodeIoctlOut(channel_.body(), 0);
    EXPECT_EQ(got.result, result);
    EXPECT_EQ(got.flags, 0u);
    EXPECT_EQ(got.in_iovs, 0u);
    EXPECT_EQ(got.out_iovs, 0u);
    EXPECT_EQ(testing::BytesAt(channel_.body(), testing::kIoctlOutSize, data.size()), data);
  }
}

TEST_F(RoundTripTest, IoctlRetryListsTheInThenOutIovecs) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    std::vector<wire::IoctlIovec> in(random_.Between(0, 4));
    std::vector<wire::IoctlIovec> out(random_.Between(0, 4));
    for (auto& iov : in) iov = {random_.U64(), random_.U64()};
    for (auto& iov : out) iov = {random_.U64(), random_.U64()};
    Reply<IoctlReply>().Retry(in, out);

    const size_t iovecs = in.size() + out.size();
    ExpectOkHeader(channel_, unique_, testing::kIoctlOutSize + iovecs * testing::kIoctlIovecSize);
    const testing::DecodedIoctlOut got = testing::DecodeIoctlOut(channel_.body(), 0);
    EXPECT_EQ(got.result, 0);
    EXPECT_EQ(got.flags, 4u);  // FUSE_IOCTL_RETRY
    EXPECT_EQ(got.in_iovs, in.size());
    EXPECT_EQ(got.out_iovs, out.size());
    for (size_t k = 0; k < iovecs; ++k) {
      const wire::IoctlIovec& want = k < in.size() ? in[k] : out[k - in.size()];
      const size_t at = testing::kIoctlOutSize + k * testing::kIoctlIovecSize;
      EXPECT_EQ(U64At(channel_.body(), at), want.base) << k;
      EXPECT_EQ(U64At(channel_.body(), at + 8), want.len) << k;
    }
  }
}

TEST_F(RoundTripTest, StatxReplyCarriesAll288Bytes) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const auto want = random_.Struct<wire::StatxOut>();
    Reply<StatxReply>().Ok(want);

    ExpectOkHeader(channel_, unique_, testing::kStatxOutSize);
    ExpectStatxOut(testing::DecodeStatxOut(channel_.body(), 0), want);
  }
}

TEST_F(RoundTripTest, DataReplyConcatenatesItsParts) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const std::vector<std::byte> a = random_.Data(100);
    const std::vector<std::byte> b = random_.Data(100);
    const std::array<ConstBytes, 2> parts = {ConstBytes(a), ConstBytes(b)};
    Reply<DataReply>().Ok(std::span<const ConstBytes>(parts));

    ExpectOkHeader(channel_, unique_, a.size() + b.size());
    EXPECT_EQ(testing::BytesAt(channel_.body(), 0, a.size() + b.size()), Concat(parts));
  }
}

TEST_F(RoundTripTest, EmptyReplyIsAHeaderAlone) {
  Reply<EmptyReply>().Ok();
  ExpectOkHeader(channel_, unique_, 0);
}

TEST_F(RoundTripTest, ErrorsTravelAsNegativeErrnoWithoutABody) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const int errno_value = static_cast<int>(random_.Between(1, 511));
    Reply<EntryReply>().Error(errno_value);
    ASSERT_EQ(channel_.message.size(), testing::kOutHeaderSize);
    const testing::DecodedOutHeader header = DecodeOutHeader(channel_.message);
    EXPECT_EQ(header.len, testing::kOutHeaderSize);
    EXPECT_EQ(header.error, -errno_value);
    EXPECT_EQ(header.unique, unique_);
  }
}

TEST_F(RoundTripTest, ErrnoOutsideTheKernelsRangeBecomesEio) {
  for (int errno_value : {0, -1, -ENOENT, 512, 4096}) {
    Reply<EmptyReply>().Error(errno_value);
    EXPECT_EQ(DecodeOutHeader(channel_.message).error, -EIO) << errno_value;
  }
}

TEST_F(RoundTripTest, EncodeReplyMessageRefusesABufferOneByteShort) {
  const std::vector<std::byte> data = random_.Data(64);
  const std::array<ConstBytes, 1> body = {ConstBytes(data)};
  std::vector<std::byte> out(testing::kOutHeaderSize + data.size() - 1);
  EXPECT_EQ(EncodeReplyMessage(1, 0, body, out), 0u);
  out.resize(out.size() + 1);
  EXPECT_EQ(EncodeReplyMessage(1, 0, body, out), out.size());
  EXPECT_EQ(EncodeReplyMessage(1, -ENOENT, body, std::span(out).first(16)), 16u);
}

struct DirentWant {
  wire::EntryOut entry;
  uint64_t off;
  uint32_t type;
  std::string name;
};

// Packs random entries until the buffer refuses one, checking that it refuses only for lack of
// room.
std::vector<DirentWant> PackUntilFull(Random& random, DirentPacker& packer, size_t capacity,
                                      bool plus) {
  std::vector<DirentWant> wanted;
  size_t used = 0;
  while (true) {
    DirentWant want{random.Struct<wire::EntryOut>(), random.U64(), random.U32(),
                    random.Name(1, 255)};
    const size_t record = testing::Align8((plus ? 152 : 24) + want.name.size());
    const bool added = plus ? packer.AddPlus(want.entry, want.off, want.type, want.name)
                            : packer.Add(want.entry.attr.ino, want.off, want.type, want.name);
    EXPECT_EQ(added, record <= capacity - used);
    if (!added) break;
    used += record;
    wanted.push_back(std::move(want));
  }
  EXPECT_EQ(packer.packed().size(), used);
  EXPECT_EQ(packer.count(), wanted.size());
  return wanted;
}

void ExpectDirents(Bytes stream, const std::vector<DirentWant>& wanted, bool plus) {
  const std::vector<testing::DecodedDirent> got = testing::DecodeDirents(stream, plus);
  ASSERT_EQ(got.size(), wanted.size());
  for (size_t k = 0; k < got.size(); ++k) {
    SCOPED_TRACE(k);
    if (plus) ExpectEntryOut(got[k].entry, wanted[k].entry);
    EXPECT_EQ(got[k].ino, wanted[k].entry.attr.ino);
    EXPECT_EQ(got[k].off, wanted[k].off);
    EXPECT_EQ(got[k].namelen, wanted[k].name.size());
    EXPECT_EQ(got[k].type, wanted[k].type);
    EXPECT_EQ(got[k].name, wanted[k].name);
  }
}

TEST_F(RoundTripTest, DirentStreamsDecodeToThePackedEntries) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const size_t capacity = random_.Between(0, 4096);
    std::vector<std::byte> buffer(capacity, std::byte{0xaa});  // padding must not leak this
    DirentPacker packer(buffer);
    const std::vector<DirentWant> wanted = PackUntilFull(random_, packer, capacity, false);
    Reply<DataReply>().Ok(packer.packed());

    ExpectOkHeader(channel_, unique_, packer.packed().size());
    ExpectDirents(channel_.body(), wanted, false);
  }
}

TEST_F(RoundTripTest, DirentPlusStreamsDecodeToThePackedEntries) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const size_t capacity = random_.Between(0, 8192);
    std::vector<std::byte> buffer(capacity, std::byte{0xaa});
    DirentPacker packer(buffer);
    const std::vector<DirentWant> wanted = PackUntilFull(random_, packer, capacity, true);
    Reply<DataReply>().Ok(packer.packed());

    ExpectOkHeader(channel_, unique_, packer.packed().size());
    ExpectDirents(channel_.body(), wanted, true);
  }
}

TEST(DirentPackerSize, MatchesTheKernelsRecordAlignment) {
  EXPECT_EQ(DirentPacker::DirentSize(1), 32u);
  EXPECT_EQ(DirentPacker::DirentSize(8), 32u);
  EXPECT_EQ(DirentPacker::DirentSize(9), 40u);
  EXPECT_EQ(DirentPacker::DirentPlusSize(1), 160u);
  EXPECT_EQ(DirentPacker::DirentPlusSize(8), 160u);
  EXPECT_EQ(DirentPacker::DirentPlusSize(9), 168u);
}

// The notification's bytes, checked to be the same through CopyTo and through Gather.
std::vector<std::byte> NotificationBytes(const Notification& n) {
  std::vector<std::byte> copied(n.size());
  EXPECT_EQ(n.CopyTo(copied), n.size());
  std::array<ConstBytes, Notification::kMaxParts> parts;
  const size_t count = n.Gather(parts);
  EXPECT_EQ(Concat(std::span(parts).first(count)), copied);
  std::vector<std::byte> short_by_one(n.size() - 1);
  EXPECT_EQ(n.CopyTo(short_by_one), 0u);
  return copied;
}

void ExpectNotifyHeader(Bytes message, int32_t code, size_t payload_size) {
  ASSERT_EQ(message.size(), testing::kOutHeaderSize + payload_size);
  const testing::DecodedOutHeader header = DecodeOutHeader(message);
  EXPECT_EQ(header.len, message.size());
  EXPECT_EQ(header.error, code);
  EXPECT_EQ(header.unique, 0u);
}

class NotifyRoundTripTest : public ::testing::Test {
 protected:
  Random random_{kSeed + 1};
};

TEST_F(NotifyRoundTripTest, PollCarriesTheKernelHandle) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const uint64_t kh = random_.U64();
    const std::vector<std::byte> bytes = NotificationBytes(Notification::Poll(kh));
    ExpectNotifyHeader(bytes, 1, 8);
    EXPECT_EQ(U64At(bytes, 16), kh);
  }
}

TEST_F(NotifyRoundTripTest, InvalInodeCarriesInodeOffsetAndLength) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const uint64_t ino = random_.U64();
    const int64_t off = random_.I64();
    const int64_t len = random_.I64();
    const std::vector<std::byte> bytes = NotificationBytes(Notification::InvalInode(ino, off, len));
    ExpectNotifyHeader(bytes, 2, 24);
    const testing::DecodedNotifyInvalInode got = testing::DecodeNotifyInvalInode(bytes);
    EXPECT_EQ(got.ino, ino);
    EXPECT_EQ(got.off, off);
    EXPECT_EQ(got.len, len);
  }
}

TEST_F(NotifyRoundTripTest, InvalEntryCarriesParentFlagsAndTheNulTerminatedName) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const uint64_t parent = random_.U64();
    const std::string name = random_.Name(1, 1024);
    const uint32_t flags = random_.U32() & wire::kExpireOnly;
    const absl::StatusOr<Notification> n = Notification::InvalEntry(parent, name, flags);
    ASSERT_TRUE(n.ok()) << n.status();
    const std::vector<std::byte> bytes = NotificationBytes(*n);
    ExpectNotifyHeader(bytes, 3, 16 + name.size() + 1);
    const testing::DecodedNotifyEntry got = testing::DecodeNotifyInvalEntry(bytes);
    EXPECT_EQ(got.parent, parent);
    EXPECT_EQ(got.namelen, name.size());
    EXPECT_EQ(got.flags_or_padding, flags);
    EXPECT_EQ(got.name, name);
    EXPECT_EQ(got.terminator, 0);
  }
}

TEST_F(NotifyRoundTripTest, DeleteCarriesParentChildAndTheNulTerminatedName) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const uint64_t parent = random_.U64();
    const uint64_t child = random_.U64();
    const std::string name = random_.Name(1, 1024);
    const absl::StatusOr<Notification> n = Notification::Delete(parent, child, name);
    ASSERT_TRUE(n.ok()) << n.status();
    const std::vector<std::byte> bytes = NotificationBytes(*n);
    ExpectNotifyHeader(bytes, 6, 24 + name.size() + 1);
    const testing::DecodedNotifyEntry got = testing::DecodeNotifyDelete(bytes);
    EXPECT_EQ(got.parent, parent);
    EXPECT_EQ(got.child, child);
    EXPECT_EQ(got.namelen, name.size());
    EXPECT_EQ(got.flags_or_padding, 0u);
    EXPECT_EQ(got.name, name);
    EXPECT_EQ(got.terminator, 0);
  }
}

TEST_F(NotifyRoundTripTest, NotifiedNamesMustBeNonEmptyShortAndFreeOfNul) {
  EXPECT_FALSE(Notification::InvalEntry(1, "").ok());
  EXPECT_FALSE(Notification::InvalEntry(1, std::string(1025, 'a')).ok());
  EXPECT_TRUE(Notification::InvalEntry(1, std::string(1024, 'a')).ok());
  EXPECT_FALSE(Notification::Delete(1, 2, std::string("a\0b", 3)).ok());
}

TEST_F(NotifyRoundTripTest, StoreCarriesNodeOffsetSizeAndTheData) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const uint64_t nodeid = random_.U64();
    const uint64_t offset = random_.U64();
    const std::vector<std::byte> data = random_.Data(4096);
    const absl::StatusOr<Notification> n = Notification::Store(nodeid, offset, data);
    ASSERT_TRUE(n.ok()) << n.status();
    const std::vector<std::byte> bytes = NotificationBytes(*n);
    ExpectNotifyHeader(bytes, 4, 24 + data.size());
    const testing::DecodedNotifyStore got = testing::DecodeNotifyStore(bytes);
    EXPECT_EQ(got.nodeid, nodeid);
    EXPECT_EQ(got.offset, offset);
    EXPECT_EQ(got.size, data.size());
    EXPECT_EQ(got.padding, 0u);
    EXPECT_EQ(got.data, data);
  }
}

TEST_F(NotifyRoundTripTest, RetrieveCarriesItsFourFields) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    const uint64_t notify_unique = random_.U64();
    const uint64_t nodeid = random_.U64();
    const uint64_t offset = random_.U64();
    const uint32_t size = random_.U32();
    const std::vector<std::byte> bytes =
        NotificationBytes(Notification::Retrieve(notify_unique, nodeid, offset, size));
    ExpectNotifyHeader(bytes, 5, 32);
    const testing::DecodedNotifyRetrieve got = testing::DecodeNotifyRetrieve(bytes);
    EXPECT_EQ(got.notify_unique, notify_unique);
    EXPECT_EQ(got.nodeid, nodeid);
    EXPECT_EQ(got.offset, offset);
    EXPECT_EQ(got.size, size);
    EXPECT_EQ(got.padding, 0u);
  }
}

TEST_F(NotifyRoundTripTest, ResendAndIncEpochAreABareHeader) {
  ExpectNotifyHeader(NotificationBytes(Notification::Resend()), 7, 0);
  ExpectNotifyHeader(NotificationBytes(Notification::IncEpoch()), 8, 0);
}

TEST_F(NotifyRoundTripTest, PruneCarriesTheCountAndEveryNodeId) {
  for (int i = 0; i < kIterations && !HasFailure(); ++i) {
    std::vector<uint64_t> nodeids(random_.Between(0, 64));
    for (uint64_t& id : nodeids) id = random_.U64();
    const absl::StatusOr<Notification> n = Notification::Prune(nodeids);
    ASSERT_TRUE(n.ok()) << n.status();
    const std::vector<std::byte> bytes = NotificationBytes(*n);
    ExpectNotifyHeader(bytes, 9, 16 + 8 * nodeids.size());
    const testing::DecodedNotifyPrune got = testing::DecodeNotifyPrune(bytes);
    EXPECT_EQ(got.count, nodeids.size());
    EXPECT_EQ(got.padding, 0u);
    EXPECT_EQ(got.spare, 0u);
    EXPECT_EQ(got.nodeids, nodeids);
  }
}

TEST(InitRoundTrip, NegotiatedInitOutDecodesToWhatWasAgreed) {
  Random random(kSeed + 2);
  constexpr uint64_t kAllFlags = (uint64_t{1} << 43) - 1;
  for (int i = 0; i < kIterations && !::testing::Test::HasFailure(); ++i) {
    wire::InitIn kernel{};
    kernel.major = 7;
    kernel.minor = static_cast<uint32_t>(random.Between(31, 50));
    kernel.max_readahead = random.U32();
    kernel.flags = random.U32();
    kernel.flags2 = random.U32();
    InitWishes wishes;
    wishes.flags = random.U64() & kAllFlags;
    wishes.max_write = static_cast<uint32_t>(random.Between(4096, 1u << 24));
    wishes.max_readahead = random.U32();
    wishes.max_background = random.U16();
    wishes.congestion_threshold = random.U16();
    wishes.time_gran = std::array<uint32_t, 4>{1, 10, 1000, 1'000'000'000}[random.Between(0, 3)];
    wishes.max_stack_depth = static_cast<uint32_t>(random.Between(0, 2));
    wishes.request_timeout = random.U16();
    const absl::StatusOr<InitResult> result = Negotiate(kernel, wishes);
    ASSERT_TRUE(result.ok()) << result.status();

    const uint64_t unique = random.U64();
    const std::array<ConstBytes, 1> body = {AsBytes(result->reply)};
    std::vector<std::byte> message(testing::kOutHeaderSize + testing::kInitOutSize);
    ASSERT_EQ(EncodeReplyMessage(unique, 0, body, message), message.size());
    EXPECT_EQ(DecodeOutHeader(message).len, message.size());
    EXPECT_EQ(DecodeOutHeader(message).unique, unique);

    const testing::DecodedInitOut got = testing::DecodeInitOut(message, testing::kOutHeaderSize);
    ExpectInitOut(got, result->reply);
    const Negotiated& agreed = result->agreed;
    EXPECT_EQ(got.flags | (uint64_t{got.flags2} << 32), agreed.flags);
    EXPECT_EQ(got.max_readahead, agreed.max_readahead);
    EXPECT_EQ(got.max_write, agreed.max_write);
    EXPECT_EQ(got.max_background, agreed.max_background);
    EXPECT_EQ(got.congestion_threshold, agreed.congestion_threshold);
    EXPECT_EQ(got.time_gran, agreed.time_gran);
    EXPECT_EQ(got.max_stack_depth, agreed.max_stack_depth);
    EXPECT_EQ(got.request_timeout, agreed.request_timeout);
  }
}

}  // namespace
}  // namespace ringfuse
