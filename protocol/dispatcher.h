// Request bytes in, handler called, reply out: the same for every transport.
//
// The dispatcher parses, answers INIT itself (through Negotiate), routes every other request to
// the Handler with a typed reply, and answers what cannot be handled: a malformed message gets EIO
// where its unique is known and one diagnostic line naming its opcode; an unknown opcode gets
// ENOSYS. It never throws, never aborts, and keeps serving after bad input.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>

#include "protocol/handler.h"
#include "protocol/init.h"
#include "protocol/reply.h"
#include "protocol/request.h"

namespace ringfuse {

// Where the dispatcher reports what went wrong. The transport supplies one that logs.
class Diagnostics {
 public:
  virtual ~Diagnostics() = default;
  virtual void Report(std::string_view line) = 0;
};

// How a transport hands one request over.
struct Delivery {
  uint64_t slot = 0;  // echoed in ReplyTarget::slot
  const std::atomic<bool>* interrupted = nullptr;
};

enum class ConnectionState { kAwaitingInit, kRunning, kInitFailed, kDestroyed };

class Dispatcher {
 public:
  Dispatcher(Handler& handler, ReplyChannel& replies, Diagnostics& diagnostics, InitWishes wishes);

  // One whole message as read from /dev/fuse.
  void Dispatch(ConstBytes message, const Delivery& delivery);
  // One request as FUSE-over-io_uring delivers it (see ParseRingRequest).
  void DispatchRing(ConstBytes in_out, ConstBytes op_in, ConstBytes payload,
                    const Delivery& delivery);

  ConnectionState state() const { return state_.load(std::memory_order_acquire); }
  // What INIT agreed; meaningful once state() is kRunning.
  const Negotiated& negotiated() const { return negotiated_; }
  const ParseContext& parse_context() const { return parse_context_; }
  uint64_t malformed_count() const { return malformed_.load(std::memory_order_relaxed); }

 private:
  friend struct RequestVisitor;

  void Route(ParseResult& parsed, const Delivery& delivery);
  void Reject(const ParseError& error, const Delivery& delivery);
  void HandleInit(const abi::InHeader& header, const op::Init& init, ReplyToken token);
  void HandleDestroy(ReplyToken token);

  Handler& handler_;
  ReplyChannel& replies_;
  Diagnostics& diagnostics_;
  const InitWishes wishes_;
  // Written once, while answering INIT, before the kernel can send anything else.
  ParseContext parse_context_;
  Negotiated negotiated_;
  std::atomic<ConnectionState> state_{ConnectionState::kAwaitingInit};
  std::atomic<uint64_t> malformed_{0};
};

}  // namespace ringfuse
