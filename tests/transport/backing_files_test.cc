// Kernel passthrough through the public BackingFiles: a handler registers a file at OPEN and the
// kernel reads it without a READ reaching the handler; without passthrough agreed at INIT the
// registration fails with a message that says so, and the handler serves the open itself.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/fd.h"
#include "gtest/gtest.h"
#include "ringfuse/backing.h"
#include "ringfuse/session.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::testing {
namespace {

constexpr uint64_t kFile = 2;
constexpr std::string_view kName = "data", kText = "read by the kernel itself\n";

wire::Attr AttrOf(uint64_t node) {
  wire::Attr attr{};
  attr.ino = node;
  attr.mode = node == kFile ? S_IFREG | 0444 : S_IFDIR | 0555;
  attr.nlink = node == kFile ? 1 : 2;
  attr.size = node == kFile ? kText.size() : 0;
  return attr;
}

// One file, whose opens the kernel passes through to a memfd holding kText when it can.
class BackedFs : public Handler {
 public:
  BackedFs() : backing_fd_(::memfd_create("ringfuse-backing-test", MFD_CLOEXEC)) {
    (void)::pwrite(backing_fd_.get(), kText.data(), kText.size(), 0);
  }

  BackingFiles& backing_files() { return backing_files_; }
  int reads() const { return reads_.load(); }
  // How the last registration went.
  absl::Status last_open() {
    std::lock_guard lock(mutex_);
    return last_open_;
  }

  void Lookup(const RequestContext& context, const op::Lookup& args, EntryReply reply) override {
    if (context.nodeid() != wire::kRootId || args.name != kName) return reply.Error(ENOENT);
    reply.Ok(MakeEntry(kFile, 0, AttrOf(kFile), Timeout{1}, Timeout{1}));
  }
  void Getattr(const RequestContext& context, const op::Getattr&, AttrReply reply) override {
    reply.Ok(MakeAttrOut(AttrOf(context.nodeid()), Timeout{1}));
  }
  void Open(const RequestContext&, const op::Open&, OpenReply reply) override {
    absl::StatusOr<BackingFile> backing = backing_files_.Open(backing_fd_.get());
    std::lock_guard lock(mutex_);
    last_open_ = backing.status();
    if (!backing.ok()) return reply.Ok(MakeOpenOut(0, 0));
    reply.Ok(MakeOpenOut(0, wire::kFopenPassthrough, backing->id()));
    open_ = std::move(*backing);  // one open at a time in these tests
  }
  void Read(const RequestContext&, const op::Read& args, DataReply reply) override {
    ++reads_;
    reply.Ok(AsBytes(kText.substr(std::min<uint64_t>(args.in.offset, kText.size()), args.in.size)));
  }
  void Release(const RequestContext&, const op::Release&, EmptyReply reply) override {
    std::lock_guard lock(mutex_);
    open_ = BackingFile();
    reply.Ok();
  }

 private:
  base::UniqueFd backing_fd_;
  BackingFiles backing_files_;
  std::atomic<int> reads_{0};
  std::mutex mutex_;
  absl::Status last_open_;
  BackingFile open_;
};

std::string ReadWhole(const std::string& path) {
  std::ifstream file(path);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

absl::StatusOr<std::unique_ptr<ServedMount>> Serve(BackedFs& fs, bool passthrough) {
  SessionOptions options;
  if (passthrough) options.init.flags |= wire::init_flag::kPassthrough;
  options.backing_files = &fs.backing_files();
  return ServedMount::Start(fs, TransportKind::kThreads, options);
}

TEST(BackingFiles, KernelReadsTheRegisteredFileItself) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  BackedFs fs;
  absl::StatusOr<std::unique_ptr<ServedMount>> mount = Serve(fs, /*passthrough=*/true);
  ASSERT_TRUE(mount.ok()) << mount.status();
  if (!(*mount)->session().negotiated().Has(wire::init_flag::kPassthrough)) {
    GTEST_SKIP() << "the kernel does not offer FUSE_PASSTHROUGH (Linux 6.9+ with "
                    "CONFIG_FUSE_PASSTHROUGH)";
  }
  EXPECT_EQ(ReadWhole((*mount)->Path(std::string(kName))), kText);
  ASSERT_TRUE(fs.last_open().ok()) << fs.last_open();
  EXPECT_EQ(fs.reads(), 0) << "a READ reached the handler of a passed-through open";
}

TEST(BackingFiles, WithoutPassthroughAgreedSaysSo) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  BackedFs fs;
  absl::StatusOr<std::unique_ptr<ServedMount>> mount = Serve(fs, /*passthrough=*/false);
  ASSERT_TRUE(mount.ok()) << mount.status();
  EXPECT_EQ(ReadWhole((*mount)->Path(std::string(kName))), kText);
  EXPECT_TRUE(absl::IsFailedPrecondition(fs.last_open())) << fs.last_open();
  EXPECT_NE(fs.last_open().message().find("not agreed at INIT"), std::string::npos)
      << fs.last_open();
  EXPECT_GT(fs.reads(), 0);
}

// A registration held past its session's end must not close the next session's registration
// of the same number: each connection numbers its backing ids afresh from 1.
TEST(BackingFiles, AHandleOutlivingItsSessionClosesNothingOnTheNext) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  BackedFs fs;
  base::UniqueFd fd(::memfd_create("ringfuse-backing-test", MFD_CLOEXEC));
  std::optional<BackingFile> stale;
  {
    absl::StatusOr<std::unique_ptr<ServedMount>> first = Serve(fs, /*passthrough=*/true);
    ASSERT_TRUE(first.ok()) << first.status();
    if (!(*first)->session().negotiated().Has(wire::init_flag::kPassthrough)) {
      GTEST_SKIP() << "the kernel does not offer FUSE_PASSTHROUGH";
    }
    absl::StatusOr<BackingFile> registered = fs.backing_files().Open(fd.get());
    ASSERT_TRUE(registered.ok()) << registered.status();
    stale = std::move(*registered);
  }
  absl::StatusOr<std::unique_ptr<ServedMount>> second = Serve(fs, /*passthrough=*/true);
  ASSERT_TRUE(second.ok()) << second.status();
  absl::StatusOr<BackingFile> current = fs.backing_files().Open(fd.get());
  ASSERT_TRUE(current.ok()) << current.status();
  ASSERT_EQ(current->id(), stale->id()) << "the check below needs both ids to be one number";
  stale.reset();
  // The kernel answers a close of an id it no longer has with an error: this passes only if the
  // stale handle left the registration alone.
  EXPECT_TRUE(current->Close().ok()) << "the stale handle closed the current registration";
}

TEST(BackingFiles, OutsideASessionSaysSo) {
  BackingFiles backing_files;
  base::UniqueFd fd(::memfd_create("ringfuse-backing-test", MFD_CLOEXEC));
  absl::StatusOr<BackingFile> backing = backing_files.Open(fd.get());
  EXPECT_TRUE(absl::IsFailedPrecondition(backing.status())) << backing.status();
  EXPECT_NE(backing.status().message().find("no session"), std::string::npos) << backing.status();
}

TEST(BackingFiles, AnEmptyHandleClosesNothing) {
  BackingFile none;
  EXPECT_EQ(none.id(), -1);
  EXPECT_TRUE(none.Close().ok());
}

}  // namespace
}  // namespace ringfuse::testing
