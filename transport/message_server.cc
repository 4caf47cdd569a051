// MessageServer (ringfuse/protocol/message_server.h): the dispatcher and the in-flight table the
// transports use, behind a transport of the caller's.
#include "ringfuse/protocol/message_server.h"

#include "protocol/dispatcher.h"
#include "protocol/request_unique.h"
#include "transport/inflight.h"
#include "transport/log.h"

namespace ringfuse {

struct MessageServer::State {
  State(Handler& handler, ReplyChannel& replies, size_t workers, InitWishes wishes)
      : inflight(workers), dispatcher(handler, replies, diagnostics, wishes) {
    dispatcher.set_interrupt_sink(&inflight);
  }

  internal::LoggingDiagnostics diagnostics;
  internal::InflightTable inflight;
  internal::Dispatcher dispatcher;
};

MessageServer::MessageServer(Handler& handler, ReplyChannel& replies, size_t workers,
                             InitWishes wishes)
    : state_(std::make_unique<State>(handler, replies, workers, wishes)) {}

MessageServer::~MessageServer() = default;

void MessageServer::Serve(size_t worker, ConstBytes message, ReplyChannel& channel) {
  const std::atomic<bool>* interrupted =
      state_->inflight.Begin(worker, internal::ReadUnique(message).value_or(0));
  state_->dispatcher.Dispatch(message, internal::Delivery{&channel, worker, interrupted});
  state_->inflight.End(worker);
}

bool MessageServer::running() const {
  return state_->dispatcher.state() == internal::ConnectionState::kRunning;
}

}  // namespace ringfuse
