// Messages with file descriptors attached (SCM_RIGHTS) on a unix socket: how fusermount3 hands
// over /dev/fuse, and how a live connection and the fds its state names go to the next daemon.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "base/fd.h"
#include "ringfuse/bytes.h"

namespace ringfuse::internal {

// The most fds the kernel accepts in one message (SCM_MAX_FD); more fail with EINVAL.
inline constexpr size_t kMaxFdsPerMessage = 253;

// Sends `bytes` with `fds` attached in one sendmsg. `bytes` must not be empty (on a stream
// socket fds travel with data) and `fds` must fit in one message: both are InvalidArgument.
absl::Status SendWithFds(int socket, ConstBytes bytes, std::span<const int> fds);

struct ReceivedMessage {
  std::vector<std::byte> bytes;     // empty: the peer closed the socket
  std::vector<base::UniqueFd> fds;  // owned, close-on-exec
};

// Receives one message of at most `max_bytes` carrying at most `max_fds` fds. More fds than
// that (the kernel drops the rest), or a datagram longer than `max_bytes`, is an error and the
// fds that did arrive are closed, so a confused or hostile peer cannot leak fds into us.
absl::StatusOr<ReceivedMessage> ReceiveWithFds(int socket, size_t max_bytes, size_t max_fds);

}  // namespace ringfuse::internal
