/// \file
/// The parser: a message from the kernel -> a Request with a typed view of every argument, or a
/// precise ParseError. For custom transports and protocol tests; a filesystem receives requests
/// already parsed (ringfuse/handler.h).
///
/// ParseRequest never reads past the bytes it is given, never aborts and never throws: a malformed
/// message becomes a ParseError that says what was wrong and, where it can be known, the unique id
/// to answer with EIO. Views point into the caller's buffer and live as long as it does.
#pragma once

#include <cstdint>
#include <variant>

#include "ringfuse/bytes.h"
#include "ringfuse/export.h"
#include "ringfuse/request.h"
#include "ringfuse/wire.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// What the parser must know of the connection: older protocols send shorter structs.
struct ParseContext {
  uint32_t minor = wire::kKernelMinor;  ///< the negotiated protocol minor
  bool setxattr_ext = true;  ///< FUSE_SETXATTR_EXT agreed: SETXATTR has the 16-byte struct
  /// The largest reply the kernel accepts (Negotiated::MaxPayload): READ, READDIR and READDIRPLUS
  /// asking for more are malformed, so that no handler sizes a buffer from an unchecked number.
  uint32_t max_reply = wire::kMaxReplyAnyConnection;
};

/// A request, or why there is none.
using ParseResult = std::variant<Request, ParseError>;

/// A whole message as read from /dev/fuse: fuse_in_header, arguments, extensions.
ParseResult ParseRequest(ConstBytes message, const ParseContext& context);

/// A request delivered over FUSE-over-io_uring, where the kernel splits it: the fuse_in_header
/// (in_out), the fixed argument struct (op_in, stale for opcodes without one) and everything else
/// (the payload, payload_sz bytes). NOTIFY_REPLY and REMOVEMAPPING carry their fixed struct at
/// the start of the payload instead. header.len is not checked: the kernel does not keep it exact.
ParseResult ParseRingRequest(ConstBytes in_out, ConstBytes op_in, ConstBytes payload,
                             const ParseContext& context);

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
