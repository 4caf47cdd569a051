// Replies written to /dev/fuse with writev: the channel of the threads transport and of INIT.
#pragma once

#include <span>

#include "ringfuse/protocol/reply_channel.h"
#include "ringfuse/reply.h"

namespace ringfuse::internal {

// Writes replies to one /dev/fuse fd, the one that read their requests: the kernel finds a
// request only among those read through the same fd.
class DevFuseReplyChannel : public ReplyChannel {
 public:
  explicit DevFuseReplyChannel(int fd) : fd_(fd) {}

  void SendReply(const ReplyTarget& target, int32_t error,
                 std::span<const ConstBytes> body) override;

 private:
  int fd_;
};

// Writes one reply (header + body) to `fd`; returns 0 or an errno. ENOENT means the kernel no
// longer waits for that request (it was interrupted or the connection aborted).
int WriteReply(int fd, uint64_t unique, int32_t error, std::span<const ConstBytes> body);

}  // namespace ringfuse::internal
