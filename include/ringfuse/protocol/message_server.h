/// \file
/// The request path of a Session without its transport, for a custom transport (a socket, a
/// test harness, an in-process stress driver): messages in, the Handler called, replies out
/// through the transport's own ReplyChannel.
#pragma once

#include <cstddef>
#include <memory>

#include "absl/status/status.h"
#include "ringfuse/bytes.h"
#include "ringfuse/export.h"
#include "ringfuse/handler.h"
#include "ringfuse/init.h"
#include "ringfuse/protocol/reply_channel.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// Serves whole FUSE messages, as /dev/fuse delivers them, for one Handler: answers INIT itself
/// (negotiating `wishes`), routes every other request to the handler with a typed reply, marks
/// requests that an INTERRUPT names, and answers what cannot be handled (a malformed message
/// EIO where its unique can be read, an unknown opcode ENOSYS) after logging it: the request path
/// of a Session's transports, with the same code. No tracer or notifier is attached to it.
///
/// Up to `workers` threads may call Serve at once, each with a worker index of its own.
class MessageServer {
 public:
  /// For `handler`, served by `workers` threads.
  MessageServer(Handler& handler, size_t workers, InitWishes wishes = {});
  ~MessageServer();
  MessageServer(const MessageServer&) = delete;
  MessageServer& operator=(const MessageServer&) = delete;

  /// Serves `message` on worker `worker`; its reply goes to `channel`. Returns once the handler
  /// has returned; a handler that keeps its reply answers later, from any thread. OutOfRange,
  /// and nothing served, for a worker index not below `workers`.
  absl::Status Serve(size_t worker, ConstBytes message, ReplyChannel& channel);

  /// Whether INIT was answered and requests are being served.
  bool running() const;

 private:
  struct State;  // the dispatcher, the requests in flight, the diagnostics
  std::unique_ptr<State> state_;
};

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
