#include "transport/dev_fuse_reader.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "protocol/request_unique.h"
#include "ringfuse/log.h"
#include "transport/transport.h"

namespace ringfuse::internal {

bool DevFuseReader::Run(const std::atomic<bool>& stopping) const {
  const DevFuseReadBuffer buffer(buffer_size);
  while (!stopping.load(std::memory_order_relaxed)) {
    const ssize_t length = ::read(fd, buffer.data(), buffer.size());
    if (length < 0) {
      // EINTR: a signal; ENOENT: the request was interrupted before we could read it.
      if (errno == EINTR || errno == ENOENT || errno == EAGAIN) continue;
      if (errno != ENODEV && errno != ECONNABORTED) {
        Log(LogLevel::kError, "read from /dev/fuse failed: %s", std::strerror(errno));
      }
      return false;
    }
    const ConstBytes message(buffer.data(), static_cast<size_t>(length));
    const std::atomic<bool>* interrupted =
        inflight.Begin(inflight_slot, ReadUnique(message).value_or(0));
    dispatcher.Dispatch(message, Delivery{&channel, reply_slot, interrupted});
    inflight.End(inflight_slot);
  }
  return true;
}

}  // namespace ringfuse::internal
