/// \file
/// Hooks a server can attach to a session: a tracer that sees every request, reply and
/// malformed message, and the sink for the kernel's answers to RETRIEVE notifications.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ringfuse/export.h"
#include "ringfuse/reply.h"
#include "ringfuse/request.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// Told of every NOTIFY_REPLY (the kernel's answer to a RETRIEVE notification) before the
/// handler is: the notifier hands the data to whoever is waiting for it.
class NotifyReplySink {
 public:
  virtual ~NotifyReplySink() = default;
  /// `notify_unique` is the one the RETRIEVE notification carried.
  virtual void OnNotifyReply(uint64_t notify_unique, const op::NotifyReply& reply) = 0;
};

/// Sees every request before its handler does, every message that failed to parse, and (as a
/// ReplyObserver) every reply: the hook for tracers. With none attached a request and its reply
/// each cost one predictable branch more.
class RequestObserver : public ReplyObserver {
 public:
  /// Called before the request's handler, on the thread that received it.
  virtual void OnRequest(const Request& request) = 0;
  /// Called for a message that failed to parse, before it is answered (EIO or ENOSYS).
  virtual void OnMalformed(const ParseError& error) = 0;
};

/// One strace-like line for a request, for a tracer's log:
/// `LOOKUP unique=12 nodeid=1 uid=1000 gid=1000 pid=42 name="etc"`.
std::string DescribeRequest(const Request& request);

/// One line for a reply: `reply unique=12 ok (2 bytes)` or `reply unique=12 error=-ENOENT`.
std::string DescribeReply(uint64_t unique, int32_t error, size_t body_size);

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
