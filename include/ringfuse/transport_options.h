/// \file
/// Which transport carries requests between the kernel and the server, and how many workers it
/// runs. The session picks one after INIT.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "ringfuse/export.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// The transports a session can run (docs/transports.md compares them).
enum class TransportKind {
  kAuto,      ///< uring-cmd when the kernel offers FUSE-over-io_uring at INIT, else uring
  kThreads,   ///< blocking read/writev, one thread per (cloned) /dev/fuse fd
  kUring,     ///< io_uring READ and WRITEV on /dev/fuse, one ring per worker
  kUringCmd,  ///< the kernel's FUSE-over-io_uring (uring_cmd), one queue per possible CPU
};

/// "auto", "threads", "uring" or "uring-cmd", as ringfused's `--transport` takes them.
std::string_view TransportName(TransportKind kind);
/// The kind TransportName names; InvalidArgument, listing the names, for any other.
absl::StatusOr<TransportKind> ParseTransportKind(std::string_view name);

/// How the chosen transport runs.
struct TransportOptions {
  int workers = 0;  ///< threads/uring: worker threads; 0 means one per online CPU
  /// uring: reads in flight per ring (default 1: more go through io-wq, see uring_transport.cc);
  /// uring-cmd: entries per queue (default 8). 0 means the transport's default.
  int queue_depth = 0;
  /// threads/uring: each worker but the first reads a clone of the connection's fd
  /// (FUSE_DEV_IOC_CLONE), with a queue of its own for the requests it has read. False: every
  /// worker reads the connection's fd itself. A kept session (keeper.h) needs that, since the
  /// requests a clone had read die with the process that held it.
  bool clone_fds = true;
};

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
