// Which transport carries requests between the kernel and the server, and how many workers it
// runs. The session picks one after INIT.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "ringfuse/export.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

enum class TransportKind {
  kAuto,      // uring-cmd when the kernel offers FUSE-over-io_uring at INIT, else uring
  kThreads,   // blocking read/writev, one thread per cloned /dev/fuse fd
  kUring,     // io_uring READ and WRITEV on /dev/fuse, one ring per worker
  kUringCmd,  // the kernel's FUSE-over-io_uring (uring_cmd), one queue per possible CPU
};

std::string_view TransportName(TransportKind kind);
absl::StatusOr<TransportKind> ParseTransportKind(std::string_view name);

struct TransportOptions {
  int workers = 0;  // threads/uring: worker threads; 0 means one per online CPU
  // uring: reads in flight per ring (default 1: more go through io-wq, see uring_transport.cc);
  // uring-cmd: entries per queue (default 8). 0 means the transport's default.
  int queue_depth = 0;
};

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
