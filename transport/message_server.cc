// MessageServer (ringfuse/protocol/message_server.h): the dispatcher and the in-flight table the
// transports use, behind a transport of the caller's.
#include "ringfuse/protocol/message_server.h"

#include "absl/strings/str_format.h"
#include "protocol/dispatcher.h"
#include "protocol/request_unique.h"
#include "transport/inflight.h"
#include "transport/log.h"

namespace ringfuse {

namespace {

// The dispatcher's channel for a request delivered without one. Serve names a channel for every
// message, so nothing reaches this one.
class NoChannel : public ReplyChannel {
 public:
  void SendReply(const ReplyTarget&, int32_t, std::span<const ConstBytes>) override {}
};

}  // namespace

struct MessageServer::State {
  State(Handler& handler, size_t workers, InitWishes wishes)
      : inflight(workers), dispatcher(handler, no_channel, diagnostics, wishes) {
    dispatcher.set_interrupt_sink(&inflight);
  }

  NoChannel no_channel;
  internal::LoggingDiagnostics diagnostics;
  internal::InflightTable inflight;
  internal::Dispatcher dispatcher;
};

MessageServer::MessageServer(Handler& handler, size_t workers, InitWishes wishes)
    : state_(std::make_unique<State>(handler, workers, wishes)) {}

MessageServer::~MessageServer() = default;

absl::Status MessageServer::Serve(size_t worker, ConstBytes message, ReplyChannel& channel) {
  if (worker >= state_->inflight.size()) {
    return absl::OutOfRangeError(absl::StrFormat("worker %u of a MessageServer for %u workers",
                                                 worker, state_->inflight.size()));
  }
  const std::atomic<bool>* interrupted =
      state_->inflight.Begin(worker, internal::ReadUnique(message).value_or(0));
  state_->dispatcher.Dispatch(message, internal::Delivery{&channel, worker, interrupted});
  state_->inflight.End(worker);
  return absl::OkStatus();
}

bool MessageServer::running() const {
  return state_->dispatcher.state() == internal::ConnectionState::kRunning;
}

}  // namespace ringfuse
