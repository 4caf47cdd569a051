// The blocking /dev/fuse read loop shared by the threads transport's workers and by the
// uring-cmd transport's reader of what still comes over /dev/fuse.
#pragma once

#include <atomic>
#include <cstddef>

#include "protocol/dispatcher.h"
#include "ringfuse/protocol/reply_channel.h"
#include "transport/inflight.h"

namespace ringfuse::internal {

struct DevFuseReader {
  int fd;
  size_t buffer_size;
  Dispatcher& dispatcher;
  ReplyChannel& channel;
  uint64_t reply_slot;  // ReplyTarget::slot for this reader's requests
  InflightTable& inflight;
  size_t inflight_slot;

  // Reads and dispatches requests until the connection ends (ENODEV, ECONNABORTED), a read
  // fails otherwise (logged), or `stopping` is seen between two requests: true in that case.
  bool Run(const std::atomic<bool>& stopping) const;
};

}  // namespace ringfuse::internal
