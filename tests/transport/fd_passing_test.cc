// SCM_RIGHTS messages: fds arrive owned and close-on-exec, naming the same open files; a peer
// that sends more fds, or more bytes, than the receiver expects leaks nothing into it; and the
// per-message limit is the kernel's own.
#include "transport/fd_passing.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "tests/open_fds.h"

namespace ringfuse::internal {
namespace {

using ringfuse::testing::OpenFdCount;

struct SocketPair {
  base::UniqueFd ours, theirs;
};

SocketPair MakeSocketPair(int type) {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds), 0) << std::strerror(errno);
  return {base::UniqueFd(fds[0]), base::UniqueFd(fds[1])};
}

struct Pipe {
  base::UniqueFd read, write;
};

Pipe MakePipe() {
  int fds[2];
  EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  return {base::UniqueFd(fds[0]), base::UniqueFd(fds[1])};
}

TEST(FdPassing, FdsArriveOwnedCloseOnExecAndNamingTheSameFiles) {
  SocketPair sockets = MakeSocketPair(SOCK_SEQPACKET);
  Pipe first = MakePipe(), second = MakePipe();
  const int sent[] = {first.write.get(), second.write.get()};
  ASSERT_TRUE(SendWithFds(sockets.ours.get(), AsBytes(std::string_view("state")), sent).ok());

  absl::StatusOr<ReceivedMessage> received = ReceiveWithFds(sockets.theirs.get(), 64, 4);
  ASSERT_TRUE(received.ok()) << received.status();
  EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(received->bytes.data()),
                             received->bytes.size()),
            "state");
  ASSERT_EQ(received->fds.size(), 2u);
  for (const base::UniqueFd& fd : received->fds) {
    EXPECT_NE(::fcntl(fd.get(), F_GETFD) & FD_CLOEXEC, 0);
  }
  // In order: what goes into the second received fd comes out of the second pipe.
  ASSERT_EQ(::write(received->fds[1].get(), "x", 1), 1);
  char byte = 0;
  ASSERT_EQ(::read(second.read.get(), &byte, 1), 1);
  EXPECT_EQ(byte, 'x');
}

TEST(FdPassing, MoreFdsThanExpectedAreAllClosed) {
  SocketPair sockets = MakeSocketPair(SOCK_SEQPACKET);
  Pipe pipe = MakePipe();
  const std::vector<int> sent(5, pipe.write.get());
  ASSERT_TRUE(SendWithFds(sockets.ours.get(), AsBytes(std::string_view("x")), sent).ok());
  const size_t before = OpenFdCount();

  absl::StatusOr<ReceivedMessage> received = ReceiveWithFds(sockets.theirs.get(), 64, 2);
  EXPECT_TRUE(absl::IsInvalidArgument(received.status())) << received.status();
  EXPECT_EQ(OpenFdCount(), before) << "fds of a refused message stayed open";
}

TEST(FdPassing, ALongerDatagramThanExpectedIsRefusedWithItsFds) {
  SocketPair sockets = MakeSocketPair(SOCK_SEQPACKET);
  Pipe pipe = MakePipe();
  const int sent[] = {pipe.write.get()};
  ASSERT_TRUE(SendWithFds(sockets.ours.get(), AsBytes(std::string_view("too long")), sent).ok());
  const size_t before = OpenFdCount();

  absl::StatusOr<ReceivedMessage> received = ReceiveWithFds(sockets.theirs.get(), 3, 1);
  EXPECT_TRUE(absl::IsInvalidArgument(received.status())) << received.status();
  EXPECT_EQ(OpenFdCount(), before);
}

TEST(FdPassing, APeerThatClosedGivesAnEmptyMessage) {
  SocketPair sockets = MakeSocketPair(SOCK_SEQPACKET);
  sockets.ours.reset();
  absl::StatusOr<ReceivedMessage> received = ReceiveWithFds(sockets.theirs.get(), 64, 1);
  ASSERT_TRUE(received.ok()) << received.status();
  EXPECT_TRUE(received->bytes.empty());
  EXPECT_TRUE(received->fds.empty());
}

TEST(FdPassing, TheLimitPerMessageIsTheKernels) {
  SocketPair sockets = MakeSocketPair(SOCK_SEQPACKET);
  Pipe pipe = MakePipe();
  const std::vector<int> at_limit(kMaxFdsPerMessage, pipe.write.get());
  ASSERT_TRUE(SendWithFds(sockets.ours.get(), AsBytes(std::string_view("x")), at_limit).ok());
  absl::StatusOr<ReceivedMessage> received =
      ReceiveWithFds(sockets.theirs.get(), 1, kMaxFdsPerMessage);
  ASSERT_TRUE(received.ok()) << received.status();
  EXPECT_EQ(received->fds.size(), kMaxFdsPerMessage);

  const std::vector<int> over(kMaxFdsPerMessage + 1, pipe.write.get());
  EXPECT_TRUE(absl::IsInvalidArgument(
      SendWithFds(sockets.ours.get(), AsBytes(std::string_view("x")), over)));
  // The kernel itself refuses one more, so the limit is not ours to raise.
  char byte = 'x';
  iovec data{&byte, 1};
  std::vector<std::byte> control(CMSG_SPACE(over.size() * sizeof(int)));
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control.data();
  message.msg_controllen = control.size();
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(over.size() * sizeof(int));
  std::memcpy(CMSG_DATA(header), over.data(), over.size() * sizeof(int));
  EXPECT_EQ(::sendmsg(sockets.ours.get(), &message, 0), -1);
  EXPECT_EQ(errno, EINVAL);
}

TEST(FdPassing, EmptyDataIsRefusedBeforeSending) {
  SocketPair sockets = MakeSocketPair(SOCK_STREAM);
  EXPECT_TRUE(absl::IsInvalidArgument(SendWithFds(sockets.ours.get(), ConstBytes(), {})));
}

}  // namespace
}  // namespace ringfuse::internal
