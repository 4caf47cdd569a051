// base::Errno and base::ErrnoOr: the daemon's one error convention (base/errno.h).
#include "base/errno.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "gtest/gtest.h"

namespace ringfuse::base {
namespace {

// What a lock guard or a closing fd does on its way out: a call that changes errno.
struct ClobbersErrnoOnExit {
  ~ClobbersErrnoOnExit() { errno = EINTR; }
};

Errno FailsWithinAScope() {
  ClobbersErrnoOnExit guard;
  return Errno::OfCall(::close(-1));
}

int FailsWithinAScopeTheOldWay() {
  ClobbersErrnoOnExit guard;
  return ::close(-1);
}

TEST(Errno, TheErrorReadRightAfterTheCallSurvivesWhatRunsAfterIt) {
  EXPECT_EQ(FailsWithinAScope(), Errno(EBADF));
  // Negative control: errno read by the caller after the scope is the destructor's, not close's.
  ASSERT_EQ(FailsWithinAScopeTheOldWay(), -1);
  EXPECT_EQ(errno, EINTR);
}

TEST(Errno, ACallThatSucceededIsNoError) {
  errno = EIO;  // left over from an earlier call
  EXPECT_TRUE(Errno::OfCall(::dup2(STDERR_FILENO, STDERR_FILENO)).ok());
  EXPECT_TRUE(Errno().ok());
  EXPECT_FALSE(Errno(ENOENT).ok());
  EXPECT_EQ(Errno(ENOENT).value(), ENOENT);
}

TEST(ErrnoOr, HoldsAMoveOnlyValueOrTheError) {
  ErrnoOr<UniqueFd> opened = FdOfCall(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(opened.ok());
  EXPECT_TRUE(opened->valid());
  const UniqueFd taken = *std::move(opened);
  EXPECT_TRUE(taken.valid());

  const ErrnoOr<UniqueFd> missing = FdOfCall(::open("/nonexistent/ringfuse", O_RDONLY));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(), Errno(ENOENT));
}

TEST(ErrnoOr, ACountOfCallIsItsValueOrItsError) {
  char byte;
  const ErrnoOr<ssize_t> read = ValueOfCall(::read(-1, &byte, 1));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error(), Errno(EBADF));

  const ErrnoOr<ssize_t> none = ValueOfCall(::write(STDERR_FILENO, &byte, 0));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 0);
}

TEST(ErrnoOr, AValueConvertsAsItsTypeDoes) {
  const ErrnoOr<std::shared_ptr<const int>> held = std::make_shared<int>(7);
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(**held, 7);
}

}  // namespace
}  // namespace ringfuse::base
