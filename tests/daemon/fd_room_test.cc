// fd_room.h: an open that finds no fd free asks the lenders for some and is made again.
#include "daemon/inodes/fd_room.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/fd.h"
#include "gtest/gtest.h"

namespace ringfuse::daemon {
namespace {

// This process at an fd limit just above what it holds, every fd under it taken (by `held`),
// the old limit put back at the end.
class FdRoomTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved_), 0);
    const int highest = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(highest, 0);
    ::close(highest);
    rlimit low = saved_;
    low.rlim_cur = static_cast<rlim_t>(highest) + 16;
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
    for (int fd; (fd = OpenNull()) >= 0;) held_.emplace_back(fd);
    ASSERT_EQ(errno, EMFILE);
  }
  void TearDown() override {
    held_.clear();
    StopLendingFds(this);
    ::setrlimit(RLIMIT_NOFILE, &saved_);
  }

  static int OpenNull() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }
  static base::ErrnoOr<base::UniqueFd> OpenNullOrError() { return base::FdOfCall(OpenNull()); }

  // A lender of the fds `held_` keeps, as the inode table lends its nodes'.
  static size_t GiveBack(void* test, size_t count) {
    std::vector<base::UniqueFd>& held = static_cast<FdRoomTest*>(test)->held_;
    size_t given = 0;
    for (; given < count && !held.empty(); ++given) held.pop_back();
    return given;
  }

  rlimit saved_{};
  std::vector<base::UniqueFd> held_;
};

TEST_F(FdRoomTest, AnOpenThatRanOutOfFdsTakesSomeFromALenderAndSucceeds) {
  LendFds(&FdRoomTest::GiveBack, this);
  const size_t held_before = held_.size();
  const base::ErrnoOr<base::UniqueFd> fd = OpenMakingRoom(OpenNullOrError);
  EXPECT_TRUE(fd.ok()) << fd.error();
  EXPECT_LT(held_.size(), held_before) << "the lender gave nothing back";
}

// The negative control: with no lender the same open fails as plainly.
TEST_F(FdRoomTest, WithNoLenderTheOpenFailsWithEmfile) {
  const base::ErrnoOr<base::UniqueFd> fd = OpenMakingRoom(OpenNullOrError);
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.error(), base::Errno(EMFILE));
}

// A lender with nothing left to give does not make the open loop.
TEST_F(FdRoomTest, ALenderWithNothingLeftLeavesTheEmfile) {
  std::vector<base::UniqueFd> kept = std::move(held_);
  held_.clear();
  LendFds(&FdRoomTest::GiveBack, this);
  const base::ErrnoOr<base::UniqueFd> fd = OpenMakingRoom(OpenNullOrError);
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.error(), base::Errno(EMFILE));
}

}  // namespace
}  // namespace ringfuse::daemon
