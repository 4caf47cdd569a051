#include "protocol/dispatcher.h"

#include <cerrno>
#include <concepts>
#include <new>
#include <type_traits>
#include <variant>

#include "absl/strings/str_format.h"
#include "ringfuse/protocol/negotiate.h"
#include "ringfuse/protocol/parse.h"
#include "ringfuse/protocol/reply_channel.h"

namespace ringfuse::internal {
namespace {

// Builds the typed reply for an operation. Some need the arguments: a listing's buffer is as large
// as the kernel asked for; WRITE answers with 32 bits, COPY_FILE_RANGE_64 with 64.
template <typename ReplyType>
struct ReplyFactory {
  template <typename Args>
  static ReplyType Make(ReplyToken token, const Args& /*args*/) {
    return ReplyType(std::move(token));
  }
};

template <typename Listing>
requires std::derived_from<Listing, DirListingReply>
struct ReplyFactory<Listing> {
  template <typename Args>
  static Listing Make(ReplyToken token, const Args& args) {
    return Listing(std::move(token), args.in);
  }
};

template <>
struct ReplyFactory<CountReply> {
  static CountReply Make(ReplyToken token, const op::Write& /*args*/) {
    return CountReply(std::move(token), false);
  }
  static CountReply Make(ReplyToken token, const op::CopyFileRange& args) {
    return CountReply(std::move(token), args.wide_reply);
  }
};

// The Handler virtual of an opcode's row: its op struct and typed reply, or its op struct alone
// where the kernel expects no answer.
template <typename Args, typename Reply>
struct HandlerMethodOf {
  using type = void (Handler::*)(const RequestContext&, const Args&, Reply);
};
template <typename Args>
struct HandlerMethodOf<Args, NoReply> {
  using type = void (Handler::*)(const RequestContext&, const Args&);
};

const char* StateName(ConnectionState state) {
  switch (state) {
    case ConnectionState::kAwaitingInit: return "not initialized";
    case ConnectionState::kRunning: return "already initialized";
    case ConnectionState::kInitFailed: return "refused at INIT";
    case ConnectionState::kDestroyed: return "destroyed";
  }
  return "in an unknown state";
}

}  // namespace

// The written-out declarations in ringfuse/handler.h agree with the opcode list; the rows the
// dispatcher answers itself (reply ReplyToken: INIT, DESTROY) reach other Handler methods.
#define RINGFUSE_CHECK_HANDLER(name, number, kernel_name, op_struct, reply, ...) \
  static_assert(std::is_same_v<reply, ReplyToken> ||                             \
                    std::is_same_v<decltype(&Handler::op_struct),                \
                                   HandlerMethodOf<op::op_struct, reply>::type>, \
                "Handler::" #op_struct " must take const op::" #op_struct "& and " #reply);
RINGFUSE_FOR_EACH_OPCODE(RINGFUSE_CHECK_HANDLER)
#undef RINGFUSE_CHECK_HANDLER

// Calls the handler method of a parsed request's opcode with its arguments and reply.
struct RequestServer {
  Dispatcher& dispatcher;
  const RequestContext& context;
  ReplyToken token;

  void Serve(const Request& request) {
    switch (request.opcode) {
#define RINGFUSE_SERVE(name, number, kernel_name, op_struct, reply, ...) \
  case Opcode::k##name:                                                  \
    return Serve<reply>(&Handler::op_struct, std::get<op::op_struct>(request.args));
      RINGFUSE_FOR_EACH_OPCODE(RINGFUSE_SERVE)
#undef RINGFUSE_SERVE
    }
  }

  template <typename Reply, typename Method, typename Args>
  void Serve(Method method, const Args& args) {
    Handler& handler = dispatcher.handler_;
    if constexpr (std::is_same_v<Reply, ReplyToken>) {
      Answer(args);
    } else if constexpr (std::is_same_v<Reply, NoReply>) {
      Notice(args);
      (handler.*method)(context, args);
    } else {
      (handler.*method)(context, args, ReplyFactory<Reply>::Make(std::move(token), args));
    }
  }

  // The requests the dispatcher answers itself.
  void Answer(const op::Init& args) {
    dispatcher.HandleInit(context.header, args, std::move(token));
  }
  void Answer(const op::Destroy& /*args*/) { dispatcher.HandleDestroy(std::move(token)); }

  // What the dispatcher takes from a request without an answer before the handler sees it.
  void Notice(const op::Interrupt& args) {
    if (dispatcher.interrupt_sink_ != nullptr) {
      dispatcher.interrupt_sink_->MarkInterrupted(args.in.unique);
    }
  }
  void Notice(const op::NotifyReply& args) {
    if (dispatcher.notify_reply_sink_ != nullptr) {
      dispatcher.notify_reply_sink_->OnNotifyReply(context.header.unique, args);
    }
  }
  void Notice(const auto& /*args*/) {}
};

Dispatcher::Dispatcher(Handler& handler, ReplyChannel& replies, Diagnostics& diagnostics,
                       InitWishes wishes)
    : handler_(handler), replies_(replies), diagnostics_(diagnostics), wishes_(wishes) {}

void Dispatcher::Dispatch(ConstBytes message, const Delivery& delivery) {
  ParseResult parsed = ParseRequest(message, parse_context_);
  Route(parsed, delivery);
}

void Dispatcher::DispatchRing(ConstBytes in_out, ConstBytes op_in, ConstBytes payload,
                              const Delivery& delivery) {
  ParseResult parsed = ParseRingRequest(in_out, op_in, payload, parse_context_);
  Route(parsed, delivery);
}

void Dispatcher::Route(ParseResult& parsed, const Delivery& delivery) {
  if (const ParseError* error = std::get_if<ParseError>(&parsed)) {
    Reject(*error, delivery);
    return;
  }
  Request& request = std::get<Request>(parsed);
  if (observer_ != nullptr) observer_->OnRequest(request);
  const std::optional<OpcodeInfo> info = LookupOpcode(request.header.opcode);
  ReplyToken token = info->replies
                         ? ChannelFor(delivery)->Promise(
                               ReplyTarget{request.header.unique, delivery.slot}, observer_)
                         : ReplyToken();
  const bool is_init = request.opcode == Opcode::kInit;
  const ConnectionState expected =
      is_init ? ConnectionState::kAwaitingInit : ConnectionState::kRunning;
  if (state() != expected) {
    // The kernel sends INIT once and first, and nothing after a refused INIT or DESTROY;
    // anything else means the two sides disagree.
    diagnostics_.Report(absl::StrFormat("%s (unique %u) arrived while the connection is %s",
                                        info->name, request.header.unique, StateName(state())));
    token.Error(EIO);
    return;
  }
  const RequestContext context{request.header, request.extensions, delivery.interrupted};
  try {
    RequestServer{*this, context, std::move(token)}.Serve(request);
  } catch (const std::bad_alloc&) {
    // The reply, dropped on the way out, has answered EIO: the daemon lives on. No formatting
    // here, which would need memory too.
    diagnostics_.Report("a handler ran out of memory; its request was answered EIO");
  }
}

void Dispatcher::Reject(const ParseError& error, const Delivery& delivery) {
  malformed_.fetch_add(1, std::memory_order_relaxed);
  if (observer_ != nullptr) observer_->OnMalformed(error);
  const std::optional<OpcodeInfo> info = LookupOpcode(error.opcode);
  // An unknown opcode is well-formed as far as we can tell: the kernel is newer than us.
  const int answer = error.kind == ParseErrorKind::kUnknownOpcode ? ENOSYS : EIO;
  const bool answerable = error.unique.has_value() && (!info || info->replies);
  const char* outcome = !answerable        ? "not answered"
                        : answer == ENOSYS ? "answered with ENOSYS"
                                           : "answered with EIO";
  diagnostics_.Report(absl::StrFormat("malformed request: %s; %s", error.ToString(), outcome));
  if (answerable) {
    ChannelFor(delivery)
        ->Promise(ReplyTarget{*error.unique, delivery.slot}, observer_)
        .Error(answer);
  }
}

void Dispatcher::HandleInit(const wire::InHeader& header, const op::Init& init, ReplyToken token) {
  absl::StatusOr<InitResult> result = Negotiate(init.in, wishes_);
  if (!result.ok()) {
    diagnostics_.Report(
        absl::StrFormat("INIT (unique %u) refused: %s", header.unique, result.status().message()));
    state_.store(ConnectionState::kInitFailed, std::memory_order_release);
    token.Error(EPROTO);
    return;
  }
  Agree(result->agreed);
  const ConstBytes reply = AsBytes(result->reply).first(InitOutSize(init.in.minor));
  token.Send({reply});
}

void Dispatcher::Agree(const Negotiated& negotiated) {
  negotiated_ = negotiated;
  parse_context_ = ParseContext{negotiated_.minor, negotiated_.Has(wire::init_flag::kSetxattrExt),
                                negotiated_.MaxPayload(wishes_.page_size)};
  handler_.Init(negotiated_);
  state_.store(ConnectionState::kRunning, std::memory_order_release);
}

void Dispatcher::HandleDestroy(ReplyToken token) {
  handler_.Destroy();
  state_.store(ConnectionState::kDestroyed, std::memory_order_release);
  token.Send(std::span<const ConstBytes>{});
}

}  // namespace ringfuse::internal
