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
#include <cstdio>
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

// errno of an open that should fail, or 0 (the fd closed again) when it succeeded.
int OpenErrno(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

constexpr const char* kOutFromSub = "../../outside/inner";  // for a symlink in SOURCE/sub
constexpr const char* kOutFromTop = "../outside/inner";     // for a symlink in SOURCE
constexpr int kMinExchanges = 100;  // exchanges of sub and swap while the clients create

TEST_P(PassthroughEscape, SymlinksInSourceAreNeverFollowedByTheDaemon) {
  ASSERT_EQ(::symlink(kOutFromSub, Source("sub/link").c_str()), 0);
  DaemonOptions options;
  options.negative_timeout = Timeout{60, 0};
  ASSERT_NO_FATAL_FAILURE(Mount(options));
  // Clients follow the link themselves, to a place that does not exist.
  EXPECT_EQ(OpenErrno(Mounted("sub/link/x"), O_CREAT | O_WRONLY), ENOENT);
  EXPECT_EQ(ErrnoOf(::mkdir(Mounted("sub/link/d").c_str(), 0755)), ENOENT);
  EXPECT_EQ(OpenErrno(Mounted("sub/link"), O_CREAT | O_WRONLY), ENOENT);

  // A name the kernel caches as missing becomes such a symlink in SOURCE: the kernel then asks
  // the daemon to create it, and the daemon must not follow the symlink.
  EXPECT_EQ(ErrnoOf(::access(Mounted("sub/late").c_str(), F_OK)), ENOENT);
  ASSERT_EQ(::symlink("../../outside/inner/created", Source("sub/late").c_str()), 0);
  EXPECT_EQ(OpenErrno(Mounted("sub/late"), O_CREAT | O_WRONLY), ELOOP)
      << "the create went through a symlink";
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
  std::atomic<int> exchanges{0};
  std::thread swapper([&] {
    while (!stop.load()) {
      if (::renameat2(AT_FDCWD, Source("sub").c_str(), AT_FDCWD, Source("swap").c_str(),
                      RENAME_EXCHANGE) == 0) {
        ++exchanges;
      }
    }
  });
  const int exchanges_before = exchanges.load();
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
  const int exchanges_during = exchanges.load() - exchanges_before;
  stop = true;
  swapper.join();
  std::printf("[   INFO   ] %d exchanges of sub and swap while the clients made %d files\n",
              exchanges_during, created);
  EXPECT_GE(exchanges_during, kMinExchanges)
      << "SOURCE's names seldom changed while clients created: the test proved nothing";
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
