// A caller's writes through the mount get only the caller's rights on the backing filesystem,
// not root's: on ext4, blocks reserved for root (mkfs -m) stay out of reach of other users,
// natively and through the mount alike (CAP_SYS_RESOURCE is not the caller's).
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "tests/daemon/passthrough_fixture.h"
#include "tests/daemon/test_users.h"

namespace ringfuse::daemon {
namespace {

constexpr size_t kChunk = 64 * 1024;
char chunk[kChunk];  // static: the children make system calls only

// 16 MiB, half of it reserved for root: a user may write about 5 MiB of it, root about 13.
constexpr off_t kImageSize = 16 << 20;
constexpr size_t kMoreThanAUserMay = 8 << 20;

// Writes `size` bytes to a new file `path`; 0, or -1 with errno (ENOSPC) where they did not fit.
int WriteNew(const std::string& path, size_t size) {
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  if (fd < 0) return -1;
  for (size_t done = 0; done < size; done += kChunk) {
    if (::write(fd, chunk, kChunk) != static_cast<ssize_t>(kChunk)) {
      const int error = errno;
      ::close(fd);
      errno = error;
      return -1;
    }
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
    internal::UniqueFd file(::open(image.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
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
  options.allow_other = true;
  ASSERT_NO_FATAL_FAILURE(Mount(options));
  EXPECT_EQ(bob_writes(Mounted("bob")), ENOSPC);
  ASSERT_EQ(::unlink(Mounted("bob").c_str()), 0);
  EXPECT_EQ(WriteNew(Mounted("root"), kMoreThanAUserMay), 0)
      << "root may use them: " << std::strerror(errno);
}

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughReserved, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
