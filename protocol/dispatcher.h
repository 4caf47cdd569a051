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

#include "ringfuse/handler.h"
#include "ringfuse/init.h"
#include "ringfuse/observer.h"
#include "ringfuse/protocol/parse.h"
#include "ringfuse/protocol/reply_channel.h"
#include "ringfuse/reply.h"
#include "ringfuse/request.h"

namespace ringfuse::internal {

// Where the dispatcher reports what went wrong. The transport supplies one that logs.
class Diagnostics {
 public:
  virtual ~Diagnostics() = default;
  virtual void Report(std::string_view line) = 0;
};

// Told of every INTERRUPT before the handler is: the transport marks the interrupted request
// where its handler can see it (RequestContext::Interrupted).
class InterruptSink {
 public:
  virtual ~InterruptSink() = default;
  virtual void MarkInterrupted(uint64_t unique) = 0;
};

// How a transport hands one request over.
struct Delivery {
  ReplyChannel* channel = nullptr;  // where the reply goes; null: the dispatcher's default channel
  uint64_t slot = 0;                // echoed in ReplyTarget::slot
  const std::atomic<bool>* interrupted = nullptr;
};

enum class ConnectionState { kAwaitingInit, kRunning, kInitFailed, kDestroyed };

class Dispatcher {
 public:
  // `replies` answers requests whose Delivery names no channel (INIT, in practice).
  Dispatcher(Handler& handler, ReplyChannel& replies, Diagnostics& diagnostics, InitWishes wishes);

  // One whole message as read from /dev/fuse.
  void Dispatch(ConstBytes message, const Delivery& delivery);
  // One request as FUSE-over-io_uring delivers it (see ParseRingRequest).
  void DispatchRing(ConstBytes in_out, ConstBytes op_in, ConstBytes payload,
                    const Delivery& delivery);

  // Set before requests flow (the session does it once its transport exists).
  void set_interrupt_sink(InterruptSink* sink) { interrupt_sink_ = sink; }
  void set_notify_reply_sink(NotifyReplySink* sink) { notify_reply_sink_ = sink; }
  void set_observer(RequestObserver* observer) { observer_ = observer; }

  // A connection taken over from another process, whose INIT that process answered: serves
  // from now on as agreed then (the handler's Init is told, as after an INIT).
  void Agree(const Negotiated& negotiated);

  ConnectionState state() const { return state_.load(std::memory_order_acquire); }
  // What INIT agreed; meaningful once state() is kRunning.
  const Negotiated& negotiated() const { return negotiated_; }
  const ParseContext& parse_context() const { return parse_context_; }
  uint64_t malformed_count() const { return malformed_.load(std::memory_order_relaxed); }

 private:
  friend struct RequestServer;

  void Route(ParseResult& parsed, const Delivery& delivery);
  void Reject(const ParseError& error, const Delivery& delivery);
  ReplyChannel* ChannelFor(const Delivery& delivery) {
    return delivery.channel != nullptr ? delivery.channel : &replies_;
  }
  void HandleInit(const wire::InHeader& header, const op::Init& init, ReplyToken token);
  void HandleDestroy(ReplyToken token);

  Handler& handler_;
  ReplyChannel& replies_;
  Diagnostics& diagnostics_;
  const InitWishes wishes_;
  InterruptSink* interrupt_sink_ = nullptr;
  NotifyReplySink* notify_reply_sink_ = nullptr;
  RequestObserver* observer_ = nullptr;
  // Written once, while answering INIT, before the kernel can send anything else.
  ParseContext parse_context_;
  Negotiated negotiated_;
  std::atomic<ConnectionState> state_{ConnectionState::kAwaitingInit};
  std::atomic<uint64_t> malformed_{0};
};

}  // namespace ringfuse::internal
