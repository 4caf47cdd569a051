// MemFs driven the way a transport drives it: request bytes written by hand go through a
// Dispatcher, and replies are decoded from the bytes it sends back. No kernel is involved.
#include "examples/memfs/memfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "protocol/dispatcher.h"
#include "ringfuse/protocol/reply_channel.h"
#include "tests/protocol/test_decoder.h"
#include "tests/protocol/wire.h"

namespace ringfuse::testing {
namespace {

using examples::MemFs;

constexpr uint64_t kRoot = 1;
constexpr uint32_t kUid = 1234;
constexpr uint32_t kGid = 5678;
constexpr uint32_t kRenameNoreplace = 1;  // renameat2(2) flags
constexpr uint32_t kRenameExchange = 2;

// One reply as the kernel would read it: the error and the concatenated body.
struct Reply {
  int32_t error = 0;
  std::vector<std::byte> body;
};

std::string Text(const std::vector<std::byte>& bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// Keeps every reply by unique; requests may be answered from other threads.
class RecordingChannel : public ReplyChannel {
 public:
  void SendReply(const ReplyTarget& target, int32_t error,
                 std::span<const ConstBytes> body) override {
    Reply reply{error, {}};
    for (ConstBytes part : body) reply.body.insert(reply.body.end(), part.begin(), part.end());
    std::lock_guard lock(mu_);
    EXPECT_TRUE(replies_.emplace(target.unique, std::move(reply)).second)
        << "second reply to unique " << target.unique;
  }

  std::optional<Reply> Take(uint64_t unique) {
    std::lock_guard lock(mu_);
    const auto it = replies_.find(unique);
    if (it == replies_.end()) return std::nullopt;
    Reply reply = std::move(it->second);
    replies_.erase(it);
    return reply;
  }

 private:
  std::mutex mu_;
  std::map<uint64_t, Reply> replies_;
};

// Every request these tests build is well-formed; a diagnostic means the test itself is wrong.
class FailingDiagnostics : public internal::Diagnostics {
 public:
  void Report(std::string_view line) override { ADD_FAILURE() << line; }
};

struct SetattrFields {
  uint32_t valid = 0;
  uint64_t size = 0;
  uint64_t atime = 0;
  uint32_t atimensec = 0;
  uint64_t mtime = 0;
  uint32_t mtimensec = 0;
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
};

// Plays the kernel: writes each request as /dev/fuse would deliver it and returns the reply.
class FakeKernel {
 public:
  explicit FakeKernel(MemFs& fs) : dispatcher_(fs, channel_, diagnostics_, InitWishes{}) {}

  // INIT from a 7.45 kernel offering what the tests rely on (SETXATTR_EXT among them).
  void Init() {
    const uint64_t flags = wire::init_flag::kAsyncRead | wire::init_flag::kBigWrites |
                           wire::init_flag::kAtomicOTrunc | wire::init_flag::kDoReaddirplus |
                           wire::init_flag::kMaxPages | wire::init_flag::kSetxattrExt |
                           wire::init_flag::kInitExt;
    Wire body;
    body.U32(7).U32(45).U32(1 << 20).U32(static_cast<uint32_t>(flags));
    body.U32(static_cast<uint32_t>(flags >> 32)).Zeros(44);
    ASSERT_EQ(Call(Opcode::kInit, 0, body).error, 0);
    ASSERT_EQ(dispatcher_.state(), internal::ConnectionState::kRunning);
  }

  Reply Call(Opcode opcode, uint64_t nodeid, const Wire& body,
             const std::atomic<bool>* interrupted = nullptr) {
    const uint64_t unique = Send(opcode, nodeid, body, interrupted);
    std::optional<Reply> reply = channel_.Take(unique);
    EXPECT_TRUE(reply.has_value()) << "no reply to opcode " << static_cast<uint32_t>(opcode);
    return reply.value_or(Reply{-EPIPE, {}});
  }

  // For requests without a reply (FORGET, BATCH_FORGET, INTERRUPT). Returns the unique.
  uint64_t Send(Opcode opcode, uint64_t nodeid, const Wire& body,
                const std::atomic<bool>* interrupted = nullptr) {
    const uint64_t unique = next_unique_.fetch_add(2);
    const std::vector<std::byte> message = RequestMessage(
        {static_cast<uint32_t>(opcode), unique, nodeid, kUid, kGid, /*pid=*/42, 0}, body);
    dispatcher_.Dispatch(message, internal::Delivery{nullptr, 0, interrupted});
    return unique;
  }

  Reply Lookup(uint64_t parent, std::string_view name) {
    return Call(Opcode::kLookup, parent, Wire().CString(name));
  }
  Reply Mkdir(uint64_t parent, std::string_view name, uint32_t mode, uint32_t umask = 0) {
    return Call(Opcode::kMkdir, parent, Wire().U32(mode).U32(umask).CString(name));
  }
  Reply Mknod(uint64_t parent, std::string_view name, uint32_t mode, uint32_t rdev,
              uint32_t umask) {
    return Call(Opcode::kMknod, parent, Wire().U32(mode).U32(rdev).U32(umask).U32(0).CString(name));
  }
  Reply Symlink(uint64_t parent, std::string_view name, std::string_view target) {
    return Call(Opcode::kSymlink, parent, Wire().CString(name).CString(target));
  }
  Reply Link(uint64_t nodeid, uint64_t new_parent, std::string_view new_name) {
    return Call(Opcode::kLink, new_parent, Wire().U64(nodeid).CString(new_name));
  }
  Reply Create(uint64_t parent, std::string_view name, uint32_t mode, uint32_t flags,
               uint32_t umask = 0) {
    return Call(Opcode::kCreate, parent,
                Wire().U32(flags).U32(mode).U32(umask).U32(0).CString(name));
  }
  Reply Open(uint64_t nodeid, uint32_t flags) {
    return Call(Opcode::kOpen, nodeid, Wire().U32(flags).U32(0));
  }
  Reply Opendir(uint64_t nodeid) { return Call(Opcode::kOpendir, nodeid, Wire().U32(0).U32(0)); }
  Reply Release(uint64_t nodeid, uint64_t fh) {
    return Call(Opcode::kRelease, nodeid, Wire().U64(fh).U32(0).U32(0).U64(0));
  }
  Reply Read(uint64_t nodeid, uint64_t fh, uint64_t offset, uint32_t size) {
    return Call(Opcode::kRead, nodeid, ReadIn(fh, offset, size));
  }
  Reply Write(uint64_t nodeid, uint64_t fh, uint64_t offset, std::string_view data) {
    const Wire body = Wire()
                          .U64(fh)
                          .U64(offset)
                          .U32(static_cast<uint32_t>(data.size()))
                          .U32(0)
                          .U64(0)
                          .U32(0)
                          .U32(0)
                          .Text(data);
    return Call(Opcode::kWrite, nodeid, body);
  }
  Reply Readdir(uint64_t nodeid, uint64_t fh, uint64_t offset, uint32_t size, bool plus) {
    return Call(plus ? Opcode::kReaddirplus : Opcode::kReaddir, nodeid, ReadIn(fh, offset, size));
  }
  Reply Rename(uint64_t parent, std::string_view old_name, uint64_t new_parent,
               std::string_view new_name, uint32_t flags = 0) {
    return Call(Opcode::kRename2, parent,
                Wire().U64(new_parent).U32(flags).U32(0).CString(old_name).CString(new_name));
  }
  Reply Unlink(uint64_t parent, std::string_view name) {
    return Call(Opcode::kUnlink, parent, Wire().CString(name));
  }
  Reply Rmdir(uint64_t parent, std::string_view name) {
    return Call(Opcode::kRmdir, parent, Wire().CString(name));
  }
  Reply Getattr(uint64_t nodeid) {
    return Call(Opcode::kGetattr, nodeid, Wire().U32(0).U32(0).U64(0));
  }
  Reply Setattr(uint64_t nodeid, const SetattrFields& f) {
    const Wire body = Wire()
                          .U32(f.valid)
                          .U32(0)
                          .U64(0)  // fh
                          .U64(f.size)
                          .U64(0)  // lock_owner
                          .U64(f.atime)
                          .U64(f.mtime)
                          .U64(0)  // ctime
                          .U32(f.atimensec)
                          .U32(f.mtimensec)
                          .U32(0)  // ctimensec
                          .U32(f.mode)
                          .U32(0)
                          .U32(f.uid)
                          .U32(f.gid)
                          .U32(0);
    return Call(Opcode::kSetattr, nodeid, body);
  }
  Reply Readlink(uint64_t nodeid) { return Call(Opcode::kReadlink, nodeid, Wire()); }
  Reply Setxattr(uint64_t nodeid, std::string_view name, std::string_view value,
                 uint32_t flags = 0) {
    return Call(Opcode::kSetxattr, nodeid,
                Wire()
                    .U32(static_cast<uint32_t>(value.size()))
                    .U32(flags)
                    .U32(0)
                    .U32(0)
                    .CString(name)
                    .Text(value));
  }
  Reply Getxattr(uint64_t nodeid, std::string_view name, uint32_t size) {
    return Call(Opcode::kGetxattr, nodeid, Wire().U32(size).U32(0).CString(name));
  }
  Reply Listxattr(uint64_t nodeid, uint32_t size) {
    return Call(Opcode::kListxattr, nodeid, Wire().U32(size).U32(0));
  }
  Reply Removexattr(uint64_t nodeid, std::string_view name) {
    return Call(Opcode::kRemovexattr, nodeid, Wire().CString(name));
  }
  Reply Lseek(uint64_t nodeid, uint64_t fh, uint64_t offset, uint32_t whence) {
    return Call(Opcode::kLseek, nodeid, Wire().U64(fh).U64(offset).U32(whence).U32(0));
  }
  void Forget(uint64_t nodeid, uint64_t nlookup) {
    Send(Opcode::kForget, nodeid, Wire().U64(nlookup));
  }
  void BatchForget(const std::vector<std::pair<uint64_t, uint64_t>>& forgets) {
    Wire body;
    body.U32(static_cast<uint32_t>(forgets.size())).U32(0);
    for (const auto& [nodeid, nlookup] : forgets) body.U64(nodeid).U64(nlookup);
    Send(Opcode::kBatchForget, 0, body);
  }

 private:
  static Wire ReadIn(uint64_t fh, uint64_t offset, uint32_t size) {
    return Wire().U64(fh).U64(offset).U32(size).U32(0).U64(0).U32(0).U32(0);
  }

  RecordingChannel channel_;
  FailingDiagnostics diagnostics_;
  internal::Dispatcher dispatcher_;
  std::atomic<uint64_t> next_unique_{2};
};

// Reply decoders: each checks the error and the body's exact size first.
DecodedEntryOut Entry(const Reply& reply) {
  EXPECT_EQ(reply.error, 0);
  EXPECT_EQ(reply.body.size(), kEntryOutSize);
  return DecodeEntryOut(reply.body, 0);
}

DecodedAttr Attr(const Reply& reply) {
  EXPECT_EQ(reply.error, 0);
  EXPECT_EQ(reply.body.size(), kAttrOutSize);
  return DecodeAttrOut(reply.body, 0).attr;
}

uint64_t Handle(const Reply& reply) {
  EXPECT_EQ(reply.error, 0);
  EXPECT_EQ(reply.body.size(), kOpenOutSize);
  return DecodeOpenOut(reply.body, 0).fh;
}

uint32_t U32Out(const Reply& reply) {
  EXPECT_EQ(reply.error, 0);
  EXPECT_EQ(reply.body.size(), kU32OutSize);
  return DecodeU32Out(reply.body, 0).value;
}

uint64_t U64Out(const Reply& reply) {
  EXPECT_EQ(reply.error, 0);
  EXPECT_EQ(reply.body.size(), kU64OutSize);
  return U64At(reply.body, 0);
}

// CREATE answers fuse_entry_out then fuse_open_out.
struct Created {
  DecodedEntryOut entry;
  uint64_t fh;
};
Created CreatedFile(const Reply& reply) {
  EXPECT_EQ(reply.error, 0);
  EXPECT_EQ(reply.body.size(), kEntryOutSize + kOpenOutSize);
  return {DecodeEntryOut(reply.body, 0), DecodeOpenOut(reply.body, kEntryOutSize).fh};
}

std::vector<std::string> Names(const std::vector<DecodedDirent>& dirents) {
  std::vector<std::string> names;
  for (const DecodedDirent& d : dirents) names.push_back(d.name);
  return names;
}

// Every byte value, twice, so that a lost or doubled byte shows.
std::string BinaryPattern() {
  std::string data;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 256; ++i) data.push_back(static_cast<char>(i));
  }
  return data;
}

class MemFsTest : public ::testing::Test {
 protected:
  void SetUp() override { kernel_.Init(); }

  // Creates a file through the kernel and returns its nodeid and open handle.
  Created NewFile(std::string_view name) {
    return CreatedFile(kernel_.Create(kRoot, name, S_IFREG | 0644, O_CREAT | O_RDWR));
  }

  MemFs fs_;
  FakeKernel kernel_{fs_};
};

TEST_F(MemFsTest, LookupAnswersTestAddedFileWithItsAttributes) {
  const uint64_t id = fs_.AddFile(kRoot, "hello", std::string(1000, 'x'), 0640);
  ASSERT_GE(id, 2u);

  const DecodedEntryOut entry = Entry(kernel_.Lookup(kRoot, "hello"));
  EXPECT_EQ(entry.nodeid, id);
  EXPECT_EQ(entry.generation, 1u);
  EXPECT_EQ(entry.entry_valid, 1u);
  EXPECT_EQ(entry.attr_valid, 1u);
  EXPECT_EQ(entry.attr.ino, id);
  EXPECT_EQ(entry.attr.mode, S_IFREG | 0640u);
  EXPECT_EQ(entry.attr.size, 1000u);
  EXPECT_EQ(entry.attr.blocks, 2u);  // ceil(1000 / 512)
  EXPECT_EQ(entry.attr.blksize, 4096u);
  EXPECT_EQ(entry.attr.nlink, 1u);
}

TEST_F(MemFsTest, LookupOfMissingNameIsEnoentByDefault) {
  EXPECT_EQ(kernel_.Lookup(kRoot, "missing").error, -ENOENT);
}

TEST(MemFs, LookupOfMissingNameIsNegativeEntryWhenConfigured) {
  MemFs::Options options;
  options.negative = Timeout{7, 500};
  MemFs fs(options);
  FakeKernel kernel(fs);
  kernel.Init();

  const DecodedEntryOut entry = Entry(kernel.Lookup(kRoot, "missing"));
  EXPECT_EQ(entry.nodeid, 0u);
  EXPECT_EQ(entry.entry_valid, 7u);
  EXPECT_EQ(entry.entry_valid_nsec, 500u);
}

TEST(MemFs, EntriesAndAttributesCarryConfiguredTimeouts) {
  MemFs::Options options;
  options.entry = Timeout{30, 1};
  options.attr = Timeout{0, 250'000'000};
  MemFs fs(options);
  FakeKernel kernel(fs);
  kernel.Init();
  fs.AddDir(kRoot, "d");

  const DecodedEntryOut entry = Entry(kernel.Lookup(kRoot, "d"));
  EXPECT_EQ(entry.entry_valid, 30u);
  EXPECT_EQ(entry.entry_valid_nsec, 1u);
  EXPECT_EQ(entry.attr_valid, 0u);
  EXPECT_EQ(entry.attr_valid_nsec, 250'000'000u);
  const Reply getattr = kernel.Getattr(entry.nodeid);
  ASSERT_EQ(getattr.error, 0);
  EXPECT_EQ(DecodeAttrOut(getattr.body, 0).attr_valid_nsec, 250'000'000u);
}

TEST_F(MemFsTest, CreateWriteReadRoundTripIsByteExact) {
  const Created file = CreatedFile(kernel_.Create(kRoot, "data", S_IFREG | 0666, O_CREAT | O_RDWR,
                                                  /*umask=*/027));
  EXPECT_EQ(file.entry.attr.mode, S_IFREG | 0640u);
  EXPECT_EQ(file.entry.attr.uid, kUid);
  EXPECT_EQ(file.entry.attr.gid, kGid);
  const uint64_t id = file.entry.nodeid;
  const std::string pattern = BinaryPattern();

  EXPECT_EQ(U32Out(kernel_.Write(id, file.fh, 0, pattern)), pattern.size());
  EXPECT_EQ(U32Out(kernel_.Write(id, file.fh, 1000, "tail")), 4u);

  std::string expected = pattern + std::string(1000 - pattern.size(), '\0') + "tail";
  const Reply whole = kernel_.Read(id, file.fh, 0, 4096);
  ASSERT_EQ(whole.error, 0);
  EXPECT_EQ(Text(whole.body), expected);
  const Reply middle = kernel_.Read(id, file.fh, 255, 3);
  EXPECT_EQ(Text(middle.body), expected.substr(255, 3));
  EXPECT_EQ(kernel_.Read(id, file.fh, 1002, 100).body.size(), 2u);  // short at end of file
  EXPECT_TRUE(kernel_.Read(id, file.fh, 5000, 100).body.empty());
  EXPECT_EQ(fs_.Contents(id), expected);

  const DecodedAttr attr = Attr(kernel_.Getattr(id));
  EXPECT_EQ(attr.size, 1004u);
  EXPECT_EQ(attr.blocks, 2u);
}

TEST_F(MemFsTest, OpenWithOTruncEmptiesTheFile) {
  const uint64_t id = fs_.AddFile(kRoot, "f", "contents");
  const uint64_t fh = Handle(kernel_.Open(id, O_WRONLY | O_TRUNC));
  EXPECT_EQ(fs_.Contents(id), "");
  EXPECT_EQ(fs_.OpenHandleCount(), 1u);
  EXPECT_EQ(kernel_.Release(id, fh).error, 0);
  EXPECT_EQ(fs_.OpenHandleCount(), 0u);
}

TEST_F(MemFsTest, ReadWithUnknownHandleIsEbadf) {
  const uint64_t id = fs_.AddFile(kRoot, "f", "contents");
  EXPECT_EQ(kernel_.Read(id, 99, 0, 10).error, -EBADF);
}

TEST_F(MemFsTest, SetattrTruncatesAndExtendsWithZeros) {
  const uint64_t id = fs_.AddFile(kRoot, "f", "0123456789");

  DecodedAttr attr = Attr(kernel_.Setattr(id, {.valid = wire::kFattrSize, .size = 4}));
  EXPECT_EQ(attr.size, 4u);
  EXPECT_EQ(fs_.Contents(id), "0123");

  attr = Attr(kernel_.Setattr(id, {.valid = wire::kFattrSize, .size = 1500}));
  EXPECT_EQ(attr.size, 1500u);
  EXPECT_EQ(attr.blocks, 3u);
  EXPECT_EQ(fs_.Contents(id), "0123" + std::string(1496, '\0'));

  const uint64_t dir = fs_.AddDir(kRoot, "d");
  EXPECT_EQ(kernel_.Setattr(dir, {.valid = wire::kFattrSize, .size = 0}).error, -EISDIR);
}

TEST_F(MemFsTest, SetattrSetsModeOwnersTimesAndBumpsCtime) {
  const uint64_t id = fs_.AddFile(kRoot, "f", "x");
  timespec before{};
  clock_gettime(CLOCK_REALTIME, &before);

  const DecodedAttr attr = Attr(
      kernel_.Setattr(id, {.valid = wire::kFattrMode | wire::kFattrUid | wire::kFattrGid |
                                    wire::kFattrAtime | wire::kFattrMtime | wire::kFattrMtimeNow,
                           .atime = 1000,
                           .atimensec = 5,
                           .mode = S_IFDIR | 04711,  // the type bits cannot change
                           .uid = 77,
                           .gid = 88}));
  EXPECT_EQ(attr.mode, S_IFREG | 04711u);
  EXPECT_EQ(attr.uid, 77u);
  EXPECT_EQ(attr.gid, 88u);
  EXPECT_EQ(attr.atime, 1000u);
  EXPECT_EQ(attr.atimensec, 5u);
  EXPECT_GE(attr.mtime, static_cast<uint64_t>(before.tv_sec));
  EXPECT_GE(attr.ctime, static_cast<uint64_t>(before.tv_sec));
}

TEST_F(MemFsTest, ReaddirResumesFromReturnedOffsetWithoutLossOrDuplicates) {
  std::vector<std::string> expected = {".", ".."};
  for (int i = 0; i < 50; ++i) {
    expected.push_back("file-" + std::to_string(100 + i));
    fs_.AddFile(kRoot, expected.back(), "");
  }
  const uint64_t fh = Handle(kernel_.Opendir(kRoot));

  // 100 bytes hold three 32-byte records, so every call stops at a full buffer.
  std::vector<DecodedDirent> all;
  uint64_t offset = 0;
  for (int calls = 0; calls < 100; ++calls) {
    const Reply reply = kernel_.Readdir(kRoot, fh, offset, 100, /*plus=*/false);
    ASSERT_EQ(reply.error, 0);
    if (reply.body.empty()) break;
    const std::vector<DecodedDirent> batch = DecodeDirents(reply.body, /*plus=*/false);
    EXPECT_EQ(batch.size(), std::min<size_t>(3, expected.size() - all.size()));
    all.insert(all.end(), batch.begin(), batch.end());
    offset = all.back().off;
  }
  EXPECT_EQ(Names(all), expected);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].off, i + 1) << all[i].name;
  EXPECT_EQ(all[0].ino, kRoot);
  EXPECT_EQ(all[2].type, static_cast<uint32_t>(DT_REG));
}

TEST_F(MemFsTest, ReaddirplusTakesAReferencePerPackedEntryButNoneForDots) {
  const uint64_t a = fs_.AddFile(kRoot, "a", "aaa");
  const uint64_t b = fs_.AddFile(kRoot, "b", "");
  const uint64_t c = fs_.AddDir(kRoot, "c");
  const uint64_t fh = Handle(kernel_.Opendir(kRoot));

  // Each record is 152 + 8 bytes: this buffer holds ".", ".." and "a", not "b".
  const Reply first = kernel_.Readdir(kRoot, fh, 0, 3 * 160 + 100, /*plus=*/true);
  ASSERT_EQ(first.error, 0);
  const std::vector<DecodedDirent> head = DecodeDirents(first.body, /*plus=*/true);
  ASSERT_EQ(Names(head), (std::vector<std::string>{".", "..", "a"}));
  EXPECT_EQ(head[0].entry.nodeid, 0u);
  EXPECT_EQ(head[0].ino, kRoot);
  EXPECT_EQ(head[2].entry.nodeid, a);
  EXPECT_EQ(head[2].entry.attr.size, 3u);
  EXPECT_EQ(fs_.KernelRefs(kRoot), 0u);
  EXPECT_EQ(fs_.KernelRefs(a), 1u);
  EXPECT_EQ(fs_.KernelRefs(b), 0u);

  const Reply rest = kernel_.Readdir(kRoot, fh, head.back().off, 4096, /*plus=*/true);
  const std::vector<DecodedDirent> tail = DecodeDirents(rest.body, /*plus=*/true);
  ASSERT_EQ(Names(tail), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(tail[1].type, static_cast<uint32_t>(DT_DIR));
  EXPECT_EQ(fs_.KernelRefs(b), 1u);
  EXPECT_EQ(fs_.KernelRefs(c), 1u);
  EXPECT_TRUE(kernel_.Readdir(kRoot, fh, tail.back().off, 4096, true).body.empty());
}

TEST_F(MemFsTest, DotDotOfASubdirectoryIsItsParent) {
  const uint64_t dir = fs_.AddDir(kRoot, "d");
  const uint64_t fh = Handle(kernel_.Opendir(dir));
  const std::vector<DecodedDirent> dirents =
      DecodeDirents(kernel_.Readdir(dir, fh, 0, 4096, false).body, false);
  ASSERT_EQ(Names(dirents), (std::vector<std::string>{".", ".."}));
  EXPECT_EQ(dirents[0].ino, dir);
  EXPECT_EQ(dirents[1].ino, kRoot);
}

TEST_F(MemFsTest, MkdirHonoursUmaskAndCountsLinks) {
  const DecodedEntryOut dir = Entry(kernel_.Mkdir(kRoot, "d", 0777, /*umask=*/022));
  EXPECT_EQ(dir.attr.mode, S_IFDIR | 0755u);
  EXPECT_EQ(dir.attr.nlink, 2u);
  EXPECT_EQ(dir.attr.uid, kUid);
  Entry(kernel_.Mkdir(dir.nodeid, "sub", 0700));
  EXPECT_EQ(Attr(kernel_.Getattr(dir.nodeid)).nlink, 3u);
  EXPECT_EQ(Attr(kernel_.Getattr(kRoot)).nlink, 3u);
  EXPECT_EQ(kernel_.Mkdir(kRoot, "d", 0777).error, -EEXIST);
}

TEST_F(MemFsTest, MknodKeepsTypeAndDeviceNumber) {
  const DecodedEntryOut node =
      Entry(kernel_.Mknod(kRoot, "tty", S_IFCHR | 0666, /*rdev=*/0x0501, /*umask=*/022));
  EXPECT_EQ(node.attr.mode, S_IFCHR | 0644u);
  EXPECT_EQ(node.attr.rdev, 0x0501u);
  EXPECT_EQ(node.attr.size, 0u);
}

TEST_F(MemFsTest, SymlinkReadlinkAndTestSideRetarget) {
  const DecodedEntryOut link = Entry(kernel_.Symlink(kRoot, "ln", "some/target"));
  EXPECT_EQ(link.attr.mode, S_IFLNK | 0777u);
  EXPECT_EQ(link.attr.size, 11u);
  EXPECT_EQ(Text(kernel_.Readlink(link.nodeid).body), "some/target");

  ASSERT_TRUE(fs_.SetSymlinkTarget(link.nodeid, "elsewhere"));
  EXPECT_EQ(Text(kernel_.Readlink(link.nodeid).body), "elsewhere");
  const uint64_t other = fs_.AddSymlink(kRoot, "ln2", "x");
  EXPECT_EQ(Text(kernel_.Readlink(other).body), "x");
  EXPECT_EQ(kernel_.Readlink(fs_.AddFile(kRoot, "f", "")).error, -EINVAL);
}

TEST_F(MemFsTest, LinkAddsANameAndALink) {
  const Created file = NewFile("original");
  const DecodedEntryOut link = Entry(kernel_.Link(file.entry.nodeid, kRoot, "second"));
  EXPECT_EQ(link.nodeid, file.entry.nodeid);
  EXPECT_EQ(link.attr.nlink, 2u);
  EXPECT_EQ(fs_.KernelRefs(file.entry.nodeid), 2u);

  ASSERT_EQ(kernel_.Unlink(kRoot, "original").error, 0);
  EXPECT_EQ(Attr(kernel_.Getattr(file.entry.nodeid)).nlink, 1u);
  EXPECT_EQ(fs_.FindChild(kRoot, "second"), file.entry.nodeid);
  EXPECT_EQ(kernel_.Link(fs_.AddDir(kRoot, "d"), kRoot, "dirlink").error, -EPERM);
}

TEST_F(MemFsTest, RmdirRefusesNonEmptyDirectory) {
  const uint64_t dir = fs_.AddDir(kRoot, "d");
  fs_.AddFile(dir, "f", "");
  EXPECT_EQ(kernel_.Rmdir(kRoot, "d").error, -ENOTEMPTY);
  EXPECT_EQ(kernel_.Unlink(kRoot, "d").error, -EISDIR);
  EXPECT_EQ(kernel_.Rmdir(dir, "f").error, -ENOTDIR);

  ASSERT_EQ(kernel_.Unlink(dir, "f").error, 0);
  ASSERT_EQ(kernel_.Rmdir(kRoot, "d").error, 0);
  EXPECT_EQ(fs_.FindChild(kRoot, "d"), 0u);
  EXPECT_EQ(Attr(kernel_.Getattr(kRoot)).nlink, 2u);
  EXPECT_EQ(kernel_.Rmdir(kRoot, "d").error, -ENOENT);
}

TEST_F(MemFsTest, RenameReplacesAnExistingTarget) {
  const uint64_t source = fs_.AddFile(kRoot, "a", "new");
  fs_.AddFile(kRoot, "b", "old");
  const size_t nodes = fs_.NodeCount();

  ASSERT_EQ(kernel_.Rename(kRoot, "a", kRoot, "b").error, 0);
  EXPECT_EQ(fs_.FindChild(kRoot, "a"), 0u);
  EXPECT_EQ(fs_.FindChild(kRoot, "b"), source);
  // The kernel never looked the old "b" up, so it is gone at once.
  EXPECT_EQ(fs_.NodeCount(), nodes - 1);
}

TEST_F(MemFsTest, RenameNoreplaceRefusesAnExistingTarget) {
  const uint64_t a = fs_.AddFile(kRoot, "a", "");
  const uint64_t b = fs_.AddFile(kRoot, "b", "");
  EXPECT_EQ(kernel_.Rename(kRoot, "a", kRoot, "b", kRenameNoreplace).error, -EEXIST);
  EXPECT_EQ(fs_.FindChild(kRoot, "a"), a);
  EXPECT_EQ(fs_.FindChild(kRoot, "b"), b);
  EXPECT_EQ(kernel_.Rename(kRoot, "a", kRoot, "c", kRenameNoreplace).error, 0);
  EXPECT_EQ(kernel_.Rename(kRoot, "c", kRoot, "b", kRenameNoreplace | kRenameExchange).error,
            -EINVAL);
}

TEST_F(MemFsTest, RenameExchangeSwapsNodesAcrossDirectories) {
  const uint64_t left = fs_.AddDir(kRoot, "left");
  const uint64_t file = fs_.AddFile(left, "f", "");
  const uint64_t dir = fs_.AddDir(kRoot, "d");

  ASSERT_EQ(kernel_.Rename(left, "f", kRoot, "d", kRenameExchange).error, 0);
  EXPECT_EQ(fs_.FindChild(left, "f"), dir);
  EXPECT_EQ(fs_.FindChild(kRoot, "d"), file);
  // "d" moved under "left": its ".." link moved with it.
  EXPECT_EQ(Attr(kernel_.Getattr(left)).nlink, 3u);
  EXPECT_EQ(Attr(kernel_.Getattr(kRoot)).nlink, 3u);
  const uint64_t fh = Handle(kernel_.Opendir(dir));
  EXPECT_EQ(DecodeDirents(kernel_.Readdir(dir, fh, 0, 4096, false).body, false)[1].ino, left);

  EXPECT_EQ(kernel_.Rename(kRoot, "d", kRoot, "none", kRenameExchange).error, -ENOENT);
}

TEST_F(MemFsTest, RenameDirectoryOverDirectoryNeedsItEmpty) {
  fs_.AddDir(kRoot, "x");
  const uint64_t full = fs_.AddDir(kRoot, "full");
  fs_.AddFile(full, "f", "");
  fs_.AddDir(kRoot, "empty");
  fs_.AddFile(kRoot, "file", "");

  EXPECT_EQ(kernel_.Rename(kRoot, "x", kRoot, "full").error, -ENOTEMPTY);
  EXPECT_EQ(kernel_.Rename(kRoot, "x", kRoot, "file").error, -ENOTDIR);
  EXPECT_EQ(kernel_.Rename(kRoot, "file", kRoot, "empty").error, -EISDIR);
  EXPECT_EQ(Attr(kernel_.Getattr(kRoot)).nlink, 5u);
  ASSERT_EQ(kernel_.Rename(kRoot, "x", kRoot, "empty").error, 0);
  EXPECT_EQ(Attr(kernel_.Getattr(kRoot)).nlink, 4u);
}

TEST_F(MemFsTest, XattrSizeQueryErangeAndValue) {
  const uint64_t id = fs_.AddFile(kRoot, "f", "");
  ASSERT_EQ(kernel_.Setxattr(id, "user.color", "turquoise").error, 0);

  EXPECT_EQ(U32Out(kernel_.Getxattr(id, "user.color", 0)), 9u);
  EXPECT_EQ(kernel_.Getxattr(id, "user.color", 8).error, -ERANGE);
  const Reply value = kernel_.Getxattr(id, "user.color", 9);
  ASSERT_EQ(value.error, 0);
  EXPECT_EQ(Text(value.body), "turquoise");
  EXPECT_EQ(kernel_.Getxattr(id, "user.missing", 100).error, -ENODATA);

  ASSERT_EQ(kernel_.Setxattr(id, "user.a", "").error, 0);
  const std::string names("user.a\0user.color\0", 18);
  EXPECT_EQ(U32Out(kernel_.Listxattr(id, 0)), names.size());
  EXPECT_EQ(kernel_.Listxattr(id, 17).error, -ERANGE);
  EXPECT_EQ(Text(kernel_.Listxattr(id, 100).body), names);
}

TEST_F(MemFsTest, XattrCreateReplaceAndRemove) {
  const uint64_t id = fs_.AddFile(kRoot, "f", "");
  EXPECT_EQ(kernel_.Setxattr(id, "user.k", "v", XATTR_REPLACE).error, -ENODATA);
  EXPECT_EQ(kernel_.Setxattr(id, "user.k", "v1", XATTR_CREATE).error, 0);
  EXPECT_EQ(kernel_.Setxattr(id, "user.k", "v2", XATTR_CREATE).error, -EEXIST);
  EXPECT_EQ(kernel_.Setxattr(id, "user.k", "v3", XATTR_REPLACE).error, 0);
  EXPECT_EQ(Text(kernel_.Getxattr(id, "user.k", 10).body), "v3");

  EXPECT_EQ(kernel_.Removexattr(id, "user.k").error, 0);
  EXPECT_EQ(kernel_.Removexattr(id, "user.k").error, -ENODATA);
  EXPECT_EQ(U32Out(kernel_.Listxattr(id, 0)), 0u);
}

TEST_F(MemFsTest, LookupCountsAndForgetsTrackKernelReferences) {
  const uint64_t id = fs_.AddFile(kRoot, "f", "");
  Entry(kernel_.Lookup(kRoot, "f"));
  Entry(kernel_.Lookup(kRoot, "f"));
  Entry(kernel_.Lookup(kRoot, "f"));
  kernel_.Lookup(kRoot, "ghost");
  EXPECT_EQ(fs_.LookupCount(kRoot, "f"), 3u);
  EXPECT_EQ(fs_.LookupCount(kRoot, "ghost"), 1u);
  EXPECT_EQ(fs_.LookupCount(id, "f"), 0u);
  EXPECT_EQ(fs_.KernelRefs(id), 3u);

  kernel_.Forget(id, 1);
  EXPECT_EQ(fs_.KernelRefs(id), 2u);
  const uint64_t dir = Entry(kernel_.Mkdir(kRoot, "d", 0755)).nodeid;
  kernel_.BatchForget({{id, 2}, {dir, 1}});
  EXPECT_EQ(fs_.KernelRefs(id), 0u);
  EXPECT_EQ(fs_.KernelRefs(dir), 0u);
  // Still linked: forgetting does not remove a node that has a name.
  EXPECT_EQ(fs_.FindChild(kRoot, "f"), id);
  EXPECT_EQ(fs_.RequestCount(Opcode::kForget), 1u);
  EXPECT_EQ(fs_.RequestCount(Opcode::kBatchForget), 1u);
}

TEST_F(MemFsTest, UnlinkedOpenFileLivesUntilTheKernelForgetsIt) {
  const Created file = NewFile("f");
  const size_t nodes = fs_.NodeCount();
  ASSERT_EQ(kernel_.Unlink(kRoot, "f").error, 0);
  EXPECT_EQ(fs_.NodeCount(), nodes);
  EXPECT_EQ(U32Out(kernel_.Write(file.entry.nodeid, file.fh, 0, "still here")), 10u);
  EXPECT_EQ(Attr(kernel_.Getattr(file.entry.nodeid)).nlink, 0u);

  ASSERT_EQ(kernel_.Release(file.entry.nodeid, file.fh).error, 0);
  kernel_.Forget(file.entry.nodeid, 1);
  EXPECT_EQ(fs_.NodeCount(), nodes - 1);
  EXPECT_EQ(kernel_.Getattr(file.entry.nodeid).error, -ENOENT);
}

TEST_F(MemFsTest, LseekFindsDataBelowSizeAndTheHoleAtTheEnd) {
  const uint64_t id = fs_.AddFile(kRoot, "f", std::string(100, 'd'));
  const uint64_t fh = Handle(kernel_.Open(id, O_RDONLY));
  EXPECT_EQ(U64Out(kernel_.Lseek(id, fh, 10, SEEK_DATA)), 10u);
  EXPECT_EQ(U64Out(kernel_.Lseek(id, fh, 10, SEEK_HOLE)), 100u);
  EXPECT_EQ(kernel_.Lseek(id, fh, 100, SEEK_DATA).error, -ENXIO);
  EXPECT_EQ(kernel_.Lseek(id, fh, 0, SEEK_SET).error, -EINVAL);
}

TEST_F(MemFsTest, StatfsReportsBlockSizeAndFreeInodes) {
  const Reply reply = kernel_.Call(Opcode::kStatfs, kRoot, Wire());
  ASSERT_EQ(reply.error, 0);
  ASSERT_EQ(reply.body.size(), kStatfsOutSize);
  const DecodedStatfsOut statfs = DecodeStatfsOut(reply.body, 0);
  EXPECT_EQ(statfs.bsize, 4096u);
  EXPECT_EQ(statfs.namelen, 255u);
  EXPECT_EQ(statfs.files - statfs.ffree, fs_.NodeCount());
  EXPECT_LE(statfs.bfree, statfs.blocks);
}

TEST_F(MemFsTest, CountsRequestsByWireOpcode) {
  fs_.AddFile(kRoot, "a", "");
  kernel_.Getattr(kRoot);
  kernel_.Getattr(kRoot);
  kernel_.Rename(kRoot, "a", kRoot, "b");  // RENAME2
  kernel_.Call(Opcode::kRename, kRoot, Wire().U64(kRoot).CString("b").CString("c"));
  EXPECT_EQ(fs_.RequestCount(Opcode::kInit), 1u);
  EXPECT_EQ(fs_.RequestCount(Opcode::kGetattr), 2u);
  EXPECT_EQ(fs_.RequestCount(Opcode::kRename2), 1u);
  EXPECT_EQ(fs_.RequestCount(Opcode::kRename), 1u);
  EXPECT_EQ(fs_.RequestCount(Opcode::kLookup), 0u);
  EXPECT_NE(fs_.FindChild(kRoot, "c"), 0u);
}

TEST_F(MemFsTest, TestSideHelpersBuildAndChangeTheTree) {
  const uint64_t dir = fs_.AddDir(kRoot, "d", 0700);
  const uint64_t file = fs_.AddFile(dir, "f", "one");
  EXPECT_EQ(fs_.AddFile(dir, "f", "again"), 0u);
  EXPECT_EQ(fs_.AddFile(file, "below-a-file", ""), 0u);
  EXPECT_EQ(fs_.FindChild(dir, "f"), file);
  EXPECT_EQ(fs_.FindChild(dir, "nope"), 0u);

  ASSERT_TRUE(fs_.SetContents(file, "two"));
  const uint64_t fh = Handle(kernel_.Open(file, O_RDONLY));
  EXPECT_EQ(Text(kernel_.Read(file, fh, 0, 10).body), "two");
  EXPECT_FALSE(fs_.SetContents(dir, "x"));
  EXPECT_EQ(fs_.Contents(dir), std::nullopt);

  EXPECT_FALSE(fs_.Remove(kRoot, "d"));  // not empty
  EXPECT_TRUE(fs_.Remove(dir, "f"));
  EXPECT_TRUE(fs_.Remove(kRoot, "d"));
  EXPECT_EQ(fs_.FindChild(kRoot, "d"), 0u);
  EXPECT_EQ(fs_.KernelRefs(file), 0u);
  EXPECT_EQ(fs_.RequestCount(Opcode::kLookup), 0u);
}

TEST_F(MemFsTest, BeforeOpHookHoldsARequestInFlight) {
  const uint64_t id = fs_.AddFile(kRoot, "f", "held");
  const uint64_t fh = Handle(kernel_.Open(id, O_RDONLY));
  absl::Notification release;
  fs_.SetBeforeOp([&](Opcode opcode) {
    if (opcode == Opcode::kRead) release.WaitForNotification();
  });

  std::atomic<bool> answered{false};
  Reply reply;
  std::thread reader([&] {
    reply = kernel_.Read(id, fh, 0, 100);
    answered = true;
  });
  // The count goes up before the hook runs: once it does, the READ is being held.
  while (fs_.RequestCount(Opcode::kRead) == 0) std::this_thread::yield();
  EXPECT_EQ(Attr(kernel_.Getattr(id)).size, 4u);  // other requests still flow
  EXPECT_FALSE(answered);
  release.Notify();
  reader.join();
  EXPECT_EQ(Text(reply.body), "held");
}

TEST_F(MemFsTest, RequestInterruptedWhileHeldAnswersEintr) {
  std::atomic<bool> interrupted{false};
  // The transport raises the flag when INTERRUPT arrives; here it arrives while the hook runs.
  fs_.SetBeforeOp([&](Opcode opcode) {
    if (opcode == Opcode::kGetattr) interrupted = true;
  });
  EXPECT_EQ(kernel_.Call(Opcode::kGetattr, kRoot, Wire().U32(0).U32(0).U64(0), &interrupted).error,
            -EINTR);
  fs_.SetBeforeOp(nullptr);
  EXPECT_EQ(kernel_.Getattr(kRoot).error, 0);
}

TEST_F(MemFsTest, ConcurrentCreatesAllLand) {
  constexpr int kThreads = 8;
  constexpr int kFilesPerThread = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < kFilesPerThread; ++i) {
        const std::string name = absl::StrCat("t", t, "-", i);
        const Created file = NewFile(name);
        EXPECT_EQ(U32Out(kernel_.Write(file.entry.nodeid, file.fh, 0, name)), name.size());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  EXPECT_EQ(fs_.NodeCount(), 1u + kThreads * kFilesPerThread);
  const uint64_t fh = Handle(kernel_.Opendir(kRoot));
  const Reply listing = kernel_.Readdir(kRoot, fh, 0, 1 << 20, false);
  EXPECT_EQ(DecodeDirents(listing.body, false).size(), 2u + kThreads * kFilesPerThread);
  EXPECT_EQ(fs_.Contents(fs_.FindChild(kRoot, "t3-7")), "t3-7");
}

}  // namespace
}  // namespace ringfuse::testing
