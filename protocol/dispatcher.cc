#include "protocol/dispatcher.h"

#include <cerrno>
#include <concepts>
#include <new>
#include <type_traits>
#include <variant>

#include "absl/strings/str_format.h"
#include "protocol/replying_ops.h"

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

// Each listed operation is a Handler virtual taking its arguments and its typed reply: the
// written-out declarations in ringfuse/handler.h agree with the list the dispatcher is made of.
#define RINGFUSE_CHECK_HANDLER(Name, ReplyType)                                             \
  static_assert(                                                                            \
      std::is_same_v<decltype(&Handler::Name),                                              \
                     void (Handler::*)(const RequestContext&, const op::Name&, ReplyType)>, \
      "Handler::" #Name " must take const op::" #Name "& and " #ReplyType);
RINGFUSE_FOR_EACH_REPLYING_OP(RINGFUSE_CHECK_HANDLER)
#undef RINGFUSE_CHECK_HANDLER

// Calls the handler method that matches the parsed arguments.
struct RequestVisitor {
  Dispatcher& dispatcher;
  const RequestContext& context;
  ReplyToken token;

#define RINGFUSE_VISIT(Name, ReplyType)                                              \
  void operator()(const op::Name& args) {                                            \
    dispatcher.handler_.Name(context, args,                                          \
                             ReplyFactory<ReplyType>::Make(std::move(token), args)); \
  }
  RINGFUSE_FOR_EACH_REPLYING_OP(RINGFUSE_VISIT)
#undef RINGFUSE_VISIT

  void operator()(const op::Forget& args) { dispatcher.handler_.Forget(context, args); }
  void operator()(const op::BatchForget& args) { dispatcher.handler_.BatchForget(context, args); }
  void operator()(const op::Interrupt& args) {
    if (dispatcher.interrupt_sink_ != nullptr) {
      dispatcher.interrupt_sink_->MarkInterrupted(args.in.unique);
    }
    dispatcher.handler_.Interrupt(context, args);
  }
  void operator()(const op::NotifyReply& args) {
    if (dispatcher.notify_reply_sink_ != nullptr) {
      dispatcher.notify_reply_sink_->OnNotifyReply(context.header.unique, args);
    }
    dispatcher.handler_.NotifyReply(context, args);
  }
  void operator()(const op::Init& args) {
    dispatcher.HandleInit(context.header, args, std::move(token));
  }
  void operator()(const op::Destroy& /*args*/) { dispatcher.HandleDestroy(std::move(token)); }
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
                         ? ReplyToken(ChannelFor(delivery),
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
    std::visit(RequestVisitor{*this, context, std::move(token)}, request.args);
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
    ReplyToken(ChannelFor(delivery), ReplyTarget{*error.unique, delivery.slot}, observer_)
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
  negotiated_ = result->agreed;
  parse_context_ = ParseContext{negotiated_.minor, negotiated_.Has(wire::init_flag::kSetxattrExt),
                                negotiated_.MaxPayload(wishes_.page_size)};
  handler_.Init(negotiated_);
  state_.store(ConnectionState::kRunning, std::memory_order_release);
  const ConstBytes reply = AsBytes(result->reply).first(InitOutSize(init.in.minor));
  token.Send({reply});
}

void Dispatcher::HandleDestroy(ReplyToken token) {
  handler_.Destroy();
  state_.store(ConnectionState::kDestroyed, std::memory_order_release);
  token.Send(std::span<const ConstBytes>{});
}

}  // namespace ringfuse::internal
