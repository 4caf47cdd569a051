// No operation through the mount reaches outside SOURCE, however SOURCE's names change under it:
// symlinks in SOURCE that point outside, and a directory swapped for such a symlink in a loop
// while clients create files.
//
// The symlinks point to <top>/outside/inner (SOURCE is <top>/source) by relative paths. The
// daemon would reach that directory if it ever followed them; a client that follows them itself
// (as POSIX has it, through the mount, /tmp/ringfuse-test.X) arrives at /tmp/outside/inner,
// which does not exist, so whatever lands in <top>/outside came through the daemon.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>

#include "tests/daemon/passthrough_fixture.h"

namespace ringfuse::daemon {
namespace {

class PassthroughEscape : public PassthroughMountTest {
 protected:
  void SetUp() override {
    PassthroughMountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (std::filesystem::exists("/tmp/outside")) GTEST_SKIP() << "/tmp/outside exists here";
    outside_ = top_.path() + "/outside/inner";
    std::filesystem::create_directories(outside_);
    ASSERT_EQ(::mkdir(Source("sub").c_str(), 0755), 0);
  }

  bool OutsideIsEmpty() const { return std::filesystem::is_empty(outside_); }

  std::string outside_;
};

constexpr const char* kOutFromSub = "../../outside/inner";  // for a symlink in SOURCE/sub
constexpr const char* kOutFromTop = "../outside/inner";     // for a symlink in SOURCE

TEST_P(PassthroughEscape, SymlinksInSourceAreNeverFollowedByTheDaemon) {
  ASSERT_EQ(::symlink(kOutFromSub, Source("sub/link").c_str()), 0);
  DaemonOptions options;
  options.negative_timeout = Timeout{60, 0};
  ASSERT_NO_FATAL_FAILURE(Mount(options));
  // Clients follow the link themselves, to a place that does not exist.
  EXPECT_NE(::open(Mounted("sub/link/x").c_str(), O_CREAT | O_WRONLY, 0600), 0);
  EXPECT_NE(::mkdir(Mounted("sub/link/d").c_str(), 0755), 0);
  EXPECT_NE(::open(Mounted("sub/link").c_str(), O_CREAT | O_WRONLY, 0600), 0);

  // A name the kernel caches as missing becomes such a symlink in SOURCE: the kernel then asks
  // the daemon to create it, and the daemon must not follow the symlink.
  EXPECT_EQ(ErrnoOf(::access(Mounted("sub/late").c_str(), F_OK)), ENOENT);
  ASSERT_EQ(::symlink("../../outside/inner/created", Source("sub/late").c_str()), 0);
  const int fd = ::open(Mounted("sub/late").c_str(), O_CREAT | O_WRONLY, 0600);
  EXPECT_LT(fd, 0) << "the create went through a symlink";
  EXPECT_EQ(errno, ELOOP);
  if (fd >= 0) ::close(fd);
  EXPECT_EQ(ErrnoOf(::access(Mounted("sub/late2").c_str(), F_OK)), ENOENT);
  ASSERT_EQ(::symlink(kOutFromSub, Source("sub/late2").c_str()), 0);
  EXPECT_EQ(ErrnoOf(::mkdir(Mounted("sub/late2").c_str(), 0755)), EEXIST);
  EXPECT_TRUE(OutsideIsEmpty());
}

TEST_P(PassthroughEscape, ADirectorySwappedForASymlinkInALoopLeaksNothing) {
  ASSERT_EQ(::symlink(kOutFromTop, Source("swap").c_str()), 0);
  DaemonOptions options;
  options.entry_timeout = options.attr_timeout = Timeout{};  // every path walk asks the daemon
  ASSERT_NO_FATAL_FAILURE(Mount(options));
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    while (!stop.load()) {
      ::renameat2(AT_FDCWD, Source("sub").c_str(), AT_FDCWD, Source("swap").c_str(),
                  RENAME_EXCHANGE);
    }
  });
  int created = 0;
  for (int i = 0; i < 1500; ++i) {
    const std::string name = "file-" + std::to_string(i);
    const int fd = ::open(Mounted("sub/" + name).c_str(), O_CREAT | O_WRONLY, 0600);
    if (fd >= 0) {
      ++created;
      ::close(fd);
    }
    ::mkdir(Mounted("sub/dir-" + std::to_string(i)).c_str(), 0755);
  }
  stop = true;
  swapper.join();
  EXPECT_GT(created, 0) << "the race never let a create through: the test proved nothing";
  EXPECT_TRUE(OutsideIsEmpty());
  size_t in_source = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(source_)) {
    in_source += entry.path().filename().string().starts_with("file-");
  }
  EXPECT_EQ(in_source, static_cast<size_t>(created)) << "every file made is inside SOURCE";
}

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughEscape, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
