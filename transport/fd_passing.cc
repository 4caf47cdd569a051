#include "transport/fd_passing.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/errno_status.h"

namespace ringfuse::internal {
namespace {

// Takes ownership of every fd in the message's SCM_RIGHTS headers.
std::vector<base::UniqueFd> TakeFds(msghdr& message) {
  std::vector<base::UniqueFd> fds;
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
       header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof(fd));
      fds.emplace_back(fd);
    }
  }
  return fds;
}

}  // namespace

absl::Status SendWithFds(int socket, ConstBytes bytes, std::span<const int> fds) {
  if (bytes.empty()) return absl::InvalidArgumentError("a message with fds needs data too");
  if (fds.size() > kMaxFdsPerMessage) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%u fds in one message: the kernel takes at most %u", fds.size(), kMaxFdsPerMessage));
  }
  iovec data{const_cast<std::byte*>(bytes.data()), bytes.size()};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  std::vector<std::byte> control(fds.empty() ? 0 : CMSG_SPACE(fds.size_bytes()));
  if (!fds.empty()) {
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(fds.size_bytes());
    std::memcpy(CMSG_DATA(header), fds.data(), fds.size_bytes());
  }
  ssize_t sent;
  do {
    sent = ::sendmsg(socket, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) return base::ErrnoStatus(errno, "sending a message with fds");
  if (static_cast<size_t>(sent) != bytes.size()) {
    return absl::DataLossError(
        absl::StrFormat("sent %d of %u bytes of a message with fds", sent, bytes.size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<ReceivedMessage> ReceiveWithFds(int socket, size_t max_bytes, size_t max_fds) {
  ReceivedMessage received;
  received.bytes.resize(max_bytes);
  iovec data{received.bytes.data(), received.bytes.size()};
  // Room for one more than allowed, so that too many is seen as such and not only as truncated.
  std::vector<std::byte> control(CMSG_SPACE((max_fds + 1) * sizeof(int)));
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control.data();
  message.msg_controllen = control.size();
  ssize_t length;
  do {
    length = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
  } while (length < 0 && errno == EINTR);
  if (length < 0) return base::ErrnoStatus(errno, "receiving a message with fds");
  received.fds = TakeFds(message);
  if ((message.msg_flags & MSG_CTRUNC) != 0 || received.fds.size() > max_fds) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the peer sent more than the %u fds expected; they are closed", max_fds));
  }
  if ((message.msg_flags & MSG_TRUNC) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the peer sent a message longer than %u bytes", max_bytes));
  }
  received.bytes.resize(static_cast<size_t>(length));
  return received;
}

}  // namespace ringfuse::internal
