// -o passthrough: the kernel reads and writes regular files itself, through the backing file the
// daemon registered at open; the daemon sees no READ or WRITE for them.
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "tests/daemon/passthrough_fixture.h"

namespace ringfuse::daemon {
namespace {

class KernelPassthrough : public PassthroughMountTest {
 protected:
  void SetUp() override {
    PassthroughMountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    DaemonOptions options;
    options.passthrough = true;
    options.cache = false;  // no page cache either: only passthrough keeps I/O from the daemon
    Mount(options);
    if (HasFatalFailure()) return;
    fs_->AttachDevice(mount_->session().dev_fd());
    if (absl::Status works = fs_->CheckPassthroughWorks(); !works.ok()) {
      GTEST_SKIP() << works.message();
    }
  }
};

TEST_P(KernelPassthrough, ReadsAndWritesBypassTheDaemon) {
  Write(Source("file"), "backing bytes");
  const int fd = ::open(Mounted("file").c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  char buffer[64] = {};
  ASSERT_EQ(::pread(fd, buffer, sizeof(buffer), 0), 13);
  EXPECT_EQ(std::string(buffer, 13), "backing bytes");
  ASSERT_EQ(::pwrite(fd, "BACKING", 7, 0), 7);
  ::close(fd);
  EXPECT_EQ(Contents(Source("file")), "BACKING bytes");

  const int created = ::open(Mounted("new").c_str(), O_CREAT | O_RDWR, 0600);
  ASSERT_GE(created, 0) << std::strerror(errno);
  ASSERT_EQ(::write(created, "through create", 14), 14);
  ::close(created);
  EXPECT_EQ(Contents(Source("new")), "through create");
  EXPECT_EQ(Contents(Mounted("new")), "through create");
  EXPECT_EQ(fs_->reads_served(), 0u);
  EXPECT_EQ(fs_->writes_served(), 0u);
}

// The control: the same I/O without passthrough does reach the daemon.
TEST_P(KernelPassthrough, WithoutItTheDaemonServesTheIo) {
  Unmount();
  DaemonOptions options;
  options.cache = false;
  ASSERT_NO_FATAL_FAILURE(Mount(options));
  Write(Mounted("file"), "served");
  EXPECT_EQ(Contents(Mounted("file")), "served");
  EXPECT_GT(fs_->reads_served(), 0u);
  EXPECT_GT(fs_->writes_served(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Transports, KernelPassthrough, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
