#include "transport/dev_fuse_channel.h"

#include <sys/uio.h>

#include <cerrno>
#include <vector>

#include "protocol/reply_parts.h"
#include "ringfuse/log.h"
#include "ringfuse/wire.h"

namespace ringfuse::internal {

namespace {
// A reply has a header and at most a few body parts (IoctlReply::Retry has three).
constexpr size_t kMaxReplyParts = 8;
}  // namespace

int WriteReply(int fd, uint64_t unique, int32_t error, std::span<const ConstBytes> body) {
  size_t parts = 0;
  if (error == 0) {
    for (ConstBytes part : body) parts += part.empty() ? 0 : 1;
  }
  if (parts >= kMaxReplyParts) {
    // More parts than we gather: join them (rare, so the copy costs nothing that matters).
    std::vector<std::byte> joined(PartsSize(body));
    JoinParts(body, joined);
    const ConstBytes one[] = {joined};
    return WriteReply(fd, unique, error, one);
  }
  iovec iov[kMaxReplyParts];
  wire::OutHeader header{sizeof(wire::OutHeader), error, unique};
  iov[0] = {&header, sizeof(header)};
  size_t count = 1;
  if (error == 0) {
    for (ConstBytes part : body) {
      if (part.empty()) continue;
      iov[count++] = {const_cast<std::byte*>(part.data()), part.size()};
      header.len += static_cast<uint32_t>(part.size());
    }
  }
  for (;;) {
    const ssize_t written = ::writev(fd, iov, static_cast<int>(count));
    if (written >= 0) return 0;
    if (errno != EINTR) return errno;
  }
}

void DevFuseReplyChannel::SendReply(const ReplyTarget& target, int32_t error,
                                    std::span<const ConstBytes> body) {
  const int result = WriteReply(fd_, target.unique, error, body);
  if (result == 0) return;
  // ENOENT: the request was interrupted or aborted meanwhile; nothing is waiting for the answer.
  Log(result == ENOENT ? LogLevel::kDebug : LogLevel::kWarning,
      "reply to unique %u not delivered: %s", target.unique, std::strerror(result));
}

}  // namespace ringfuse::internal
