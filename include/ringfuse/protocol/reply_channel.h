/// \file
/// Where replies go: the ReplyChannel a transport implements, the tokens it hands out, and the
/// encoding of a reply message. For custom transports and protocol tests; a filesystem answers
/// through the typed replies of ringfuse/reply.h and never sees a channel.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "ringfuse/bytes.h"
#include "ringfuse/export.h"
#include "ringfuse/reply.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// Implemented by each transport. Called exactly once per request that expects a reply, possibly
/// from a thread other than the one that received the request, so implementations are
/// thread-safe. `error` is 0 or a negative errno in the kernel's accepted range; the body is sent
/// only with error 0 and is the concatenation of `body`.
class ReplyChannel {
 public:
  virtual ~ReplyChannel() = default;
  /// Sends one reply: `error` 0 with `body`, or a negative errno alone.
  virtual void SendReply(const ReplyTarget& target, int32_t error,
                         std::span<const ConstBytes> body) = 0;

  /// A promise to answer `target` through this channel, told to `observer` first (may be null).
  ReplyToken Promise(ReplyTarget target, ReplyObserver* observer = nullptr) {
    return ReplyToken(this, target, observer);
  }

  /// Replies not yet made, counted by the tokens, so that a transport never frees a channel
  /// that a reply held by the handler may still reach (see RetireChannel in transport/).
  uint64_t outstanding() const { return outstanding_.load(std::memory_order_acquire); }
  /// After Close, replies still made through this channel are dropped: the connection is gone.
  void Close() { closed_.store(true, std::memory_order_release); }
  /// Whether Close has been called.
  bool closed() const { return closed_.load(std::memory_order_acquire); }

 private:
  friend class ReplyToken;
  std::atomic<uint64_t> outstanding_{0};
  std::atomic<bool> closed_{false};
};

/// Maps a handler's errno to what the kernel accepts: a positive errno in 1..511 becomes its
/// negative; anything else (0, negative, out of range) becomes -EIO, because the kernel rejects
/// such a reply and the caller would otherwise see EINVAL with no trace in the server.
int32_t KernelError(int errno_value);

/// A whole reply message as /dev/fuse takes it: fuse_out_header then the body. Returns the bytes
/// written, or 0 when `out` is too small.
size_t EncodeReplyMessage(uint64_t unique, int32_t error, std::span<const ConstBytes> body,
                          MutableBytes out);

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
