// A caller's writes through the mount get only the caller's rights on the backing filesystem,
// not root's: on ext4, blocks reserved for root (mkfs -m) stay out of reach of other users,
// natively and through the mount alike (CAP_SYS_RESOURCE is not the caller's). Also for the
// writes the kernel makes without naming the writer (its writeback of a shared mapping, every
// write under writeback_cache) and those it passes through to a backing file registered by the
// daemon: those are made as the file's owner (credentials.h).
//
// The same capability passes quotas (dquot's ignore_hardlimit); quotas are not tested here,
// since this machine's kernel is built without CONFIG_QUOTA.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "tests/daemon/kernel_passthrough.h"
#include "tests/daemon/passthrough_fixture.h"
#include "tests/daemon/test_users.h"

namespace ringfuse::daemon {
namespace {

constexpr size_t kChunk = 64 * 1024;
char chunk[kChunk];  // static: the children make system calls only

// 16 MiB, half of it reserved for root: a user may write about 5 MiB of it, root about 13.
constexpr off_t kImageSize = 16 << 20;
constexpr size_t kMoreThanAUserMay = 8 << 20;

// Returns -1, keeping errno, after closing `fd`.
int CloseFailing(int fd) {
  const int error = errno;
  ::close(fd);
  errno = error;
  return -1;
}

// Writes `size` bytes to a new file `path`, down to the disk; 0, or -1 with errno (ENOSPC)
// where they did not fit. A write-back cache reports that at fsync.
int WriteNew(const std::string& path, size_t size) {
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  if (fd < 0) return -1;
  for (size_t done = 0; done < size; done += kChunk) {
    if (::write(fd, chunk, kChunk) != static_cast<ssize_t>(kChunk)) return CloseFailing(fd);
  }
  if (::fsync(fd) != 0) return CloseFailing(fd);
  return ::close(fd);
}

// The same through a shared writable mapping of a new file, written back by msync: the
// kernel's writeback, whose writes name no caller. (Natively the page fault itself fails, with
// SIGBUS: only the through-the-mount runs use this.)
int MapNew(const std::string& path, size_t size) {
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_RDWR, 0644);
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(size)) != 0) return CloseFailing(fd);
  void* mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) return CloseFailing(fd);
  char* bytes = static_cast<char*>(mapped);
  for (size_t done = 0; done < size; done += kChunk) std::memcpy(bytes + done, chunk, kChunk);
  const bool synced = ::msync(mapped, size, MS_SYNC) == 0 && ::fsync(fd) == 0;
  const int error = errno;
  ::munmap(mapped, size);
  if (!synced) {
    errno = error;
    return CloseFailing(fd);
  }
  return ::close(fd);
}

class PassthroughReserved : public PassthroughMountTest {
 protected:
  // SOURCE becomes the root of a small ext4 filesystem with half its blocks reserved.
  void SetUp() override {
    PassthroughMountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const std::string image = top_.path() + "/ext4.img";
    base::UniqueFd file(::open(image.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    ASSERT_TRUE(file.valid());
    ASSERT_EQ(::ftruncate(file.get(), kImageSize), 0);
    const std::string make = "mkfs.ext4 -q -F -m 50 " + image + " >/dev/null 2>&1";
    if (std::system(make.c_str()) != 0) GTEST_SKIP() << "no mkfs.ext4 here";
    const std::string mount = "mount -o loop " + image + " " + source_ + " >/dev/null 2>&1";
    if (std::system(mount.c_str()) != 0) GTEST_SKIP() << "cannot mount a loop device here";
    loop_mounted_ = true;
    ASSERT_EQ(::chmod(source_.c_str(), 0777), 0);
    ASSERT_EQ(::chmod(top_.path().c_str(), 0755), 0);
  }
  // After the FUSE mount, which holds SOURCE open.
  void TearDown() override {
    PassthroughMountTest::TearDown();
    if (loop_mounted_) {
      EXPECT_EQ(::umount2(source_.c_str(), MNT_DETACH), 0) << std::strerror(errno);
    }
  }

  // Served with `options` and allow_other, bob's new file written by `write` runs out of space
  // at his share; root's own may still use the reserved blocks (its owner is root).
  void ExpectBobStoppedButNotRoot(DaemonOptions options, int (*write)(const std::string&, size_t)) {
    options.mount.allow_other = true;
    ASSERT_NO_FATAL_FAILURE(Mount(options));
    if (options.passthrough) {
      ASSERT_TRUE(fs_->CheckPassthroughWorks().ok());
    }
    const std::string bob = Mounted("bob");
    EXPECT_EQ(As(kBob, [&] { return write(bob, kMoreThanAUserMay); }), ENOSPC);
    ASSERT_EQ(::unlink(bob.c_str()), 0);
    EXPECT_EQ(write(Mounted("root"), kMoreThanAUserMay), 0) << std::strerror(errno);
  }

  bool loop_mounted_ = false;
};

TEST_P(PassthroughReserved, AUsersWritesCannotUseRootsReservedBlocks) {
  const auto bob_writes = [](const std::string& path) {
    return As(kBob, [&] { return WriteNew(path, kMoreThanAUserMay); });
  };
  // The control: natively bob runs out of space, and root does not.
  EXPECT_EQ(bob_writes(Source("native")), ENOSPC);
  ASSERT_EQ(::unlink(Source("native").c_str()), 0);

  DaemonOptions options;
  options.mount.allow_other = true;
  ASSERT_NO_FATAL_FAILURE(Mount(options));
  EXPECT_EQ(bob_writes(Mounted("bob")), ENOSPC);
  ASSERT_EQ(::unlink(Mounted("bob").c_str()), 0);
  EXPECT_EQ(WriteNew(Mounted("root"), kMoreThanAUserMay), 0)
      << "root may use them: " << std::strerror(errno);
}

// The kernel's writeback arrives as uid 0: made as root, bob's mapped bytes would fill the
// reserved blocks.
TEST_P(PassthroughReserved, AUsersMappedWritesCannotUseThem) {
  ExpectBobStoppedButNotRoot({}, MapNew);
}

TEST_P(PassthroughReserved, AUsersWritesUnderWritebackCacheCannotUseThem) {
  DaemonOptions options;
  options.writeback_cache = true;
  ExpectBobStoppedButNotRoot(options, WriteNew);
}

// The kernel writes a passthrough file itself, with the credentials the backing file was
// registered with.
TEST_P(PassthroughReserved, AUsersWritesPassedThroughCannotUseThem) {
  if (const std::optional<std::string> why = WhyKernelRefusesPassthrough()) GTEST_SKIP() << *why;
  DaemonOptions options;
  options.passthrough = true;
  ExpectBobStoppedButNotRoot(options, WriteNew);
}

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughReserved, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
