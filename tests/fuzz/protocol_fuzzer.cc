// libFuzzer target over the parser and the dispatcher.
//
// Input: one mode byte, then a message. Modes: parse the message as /dev/fuse bytes under an old
// and the current protocol; split it the way FUSE-over-io_uring delivers it; feed it to a
// dispatcher that has already answered INIT, with a handler that answers every request; feed it
// to such a dispatcher split into header, op_in and payload at fuzzed places (DispatchRing); or
// read it as a whole conversation: a fuzzed INIT offer, then length-prefixed messages.
// Whatever the bytes, nothing may crash, read out of bounds, or send a reply the kernel rejects,
// and every message gets exactly the replies the kernel waits for: one when its unique can be
// read and its opcode is answered (or unknown), none otherwise.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "protocol/describe.h"
#include "protocol/dispatcher.h"
#include "ringfuse/protocol/frames.h"
#include "ringfuse/protocol/parse.h"
#include "ringfuse/protocol/reply_channel.h"
#include "ringfuse/request.h"
#include "tests/fuzz/fuzz_checks.h"

namespace ringfuse {
namespace {

using fuzz::RepliesExpected;

class CheckingChannel : public ReplyChannel {
 public:
  void SendReply(const ReplyTarget& /*target*/, int32_t error,
                 std::span<const ConstBytes> body) override {
    fuzz::CheckReplyShape(error, body);
    ++replies;
  }
  int replies = 0;
};

// Dispatches through `send` and checks that it produced exactly the replies expected.
template <typename Send>
void DispatchChecked(CheckingChannel& channel, int expected, Send send) {
  const int before = channel.replies;
  send();
  if (channel.replies - before != expected) std::abort();
}

// Answers every operation that takes data with something of the right shape.
class AnsweringHandler : public Handler {
 public:
  void Lookup(const RequestContext&, const op::Lookup& args, EntryReply reply) override {
    if (args.name.size() % 2) return reply.Error(ENOENT);
    reply.Ok(MakeEntry(2, 1, wire::Attr{}, {1, 0}, {1, 0}));
  }
  void Readdir(const RequestContext&, const op::Readdir&, DirReply reply) override {
    for (uint64_t ino = 2; ino < 10 && reply.Add("entry", ino, 0); ++ino) {
    }
    reply.Ok();
  }
  void Write(const RequestContext&, const op::Write& args, CountReply reply) override {
    reply.Ok(args.data.size());
  }
  void Getxattr(const RequestContext&, const op::Getxattr& args, XattrReply reply) override {
    if (args.in.size == 0) return reply.Size(static_cast<uint32_t>(args.name.size()));
    reply.Data(AsBytes(args.name.substr(0, std::min<size_t>(args.in.size, args.name.size()))));
  }
};

using fuzz::KernelOffer;

void FuzzParse(ConstBytes message) {
  for (uint32_t minor : {31u, 37u, 38u, 45u}) {
    for (bool setxattr_ext : {false, true}) {
      ParseResult result = ParseRequest(message, ParseContext{minor, setxattr_ext});
      if (const Request* request = std::get_if<Request>(&result)) {
        (void)DescribeRequest(*request);
      } else {
        (void)std::get<ParseError>(result).ToString();
      }
    }
  }
}

void FuzzRingSplit(ConstBytes message) {
  const size_t header = std::min<size_t>(message.size(), sizeof(wire::InHeader));
  const size_t op_in = std::min<size_t>(message.size() - header, wire::kUringOpInOutSize);
  ParseResult result = ParseRingRequest(message.first(header), message.subspan(header, op_in),
                                        message.subspan(header + op_in), ParseContext{});
  if (const Request* request = std::get_if<Request>(&result)) (void)DescribeRequest(*request);
}

// A dispatcher with a handler that answers, and the channel its replies go to.
struct Connection {
  CheckingChannel channel;
  fuzz::NullDiagnostics diagnostics;
  AnsweringHandler handler;
  internal::Dispatcher dispatcher{handler, channel, diagnostics, InitWishes{}};

  // Sends INIT with `offer`; returns whether the connection runs.
  bool Init(const wire::InitIn& offer) {
    DispatchChecked(channel, 1, [&] { fuzz::SendInit(dispatcher, offer); });
    return dispatcher.state() == internal::ConnectionState::kRunning;
  }
  void Dispatch(ConstBytes message) {
    DispatchChecked(channel, RepliesExpected(message),
                    [&] { dispatcher.Dispatch(message, internal::Delivery{}); });
  }
};

void FuzzDispatch(ConstBytes message) {
  Connection connection;
  if (!connection.Init(KernelOffer())) std::abort();
  connection.Dispatch(message);
}

// The first two bytes choose where the header and op_in end; the ring's header area holds at
// most the 128 bytes of in_out, op_in at most its 128.
void FuzzDispatchRing(ConstBytes input) {
  if (input.size() < 2) return;
  const ConstBytes message = input.subspan(2);
  const size_t header = std::min<size_t>(std::to_integer<size_t>(input[0]) % 129, message.size());
  const size_t op_in =
      std::min<size_t>(std::to_integer<size_t>(input[1]) % 129, message.size() - header);
  Connection connection;
  if (!connection.Init(KernelOffer())) std::abort();
  const ConstBytes in_out = message.first(header);
  const int expected = in_out.size() >= sizeof(wire::InHeader) ? RepliesExpected(in_out) : 0;
  DispatchChecked(connection.channel, expected, [&] {
    connection.dispatcher.DispatchRing(in_out, message.subspan(header, op_in),
                                       message.subspan(header + op_in),
                                       internal::Delivery{.slot = 1});
  });
}

// A conversation: the kernel's INIT offer (any bytes, so any version and flags), then messages,
// each after a 16-bit little-endian length. A refused INIT leaves every later request EIO.
void FuzzConversation(ConstBytes input) {
  wire::InitIn offer = KernelOffer();
  std::memcpy(&offer, input.data(), std::min(input.size(), sizeof(offer)));
  ConstBytes rest = input.subspan(std::min(input.size(), sizeof(offer)));
  Connection connection;
  connection.Init(offer);
  fuzz::ForEachMessage(rest, [&](ConstBytes message) { connection.Dispatch(message); });
}

}  // namespace
}  // namespace ringfuse

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // A private, exactly-sized copy so that any overread is caught by ASan.
  std::unique_ptr<std::byte[]> copy(new std::byte[size - 1]);
  if (size > 1) std::memcpy(copy.get(), data + 1, size - 1);
  const ringfuse::ConstBytes message(copy.get(), size - 1);
  switch (data[0] % 5) {
    case 0: ringfuse::FuzzParse(message); break;
    case 1: ringfuse::FuzzRingSplit(message); break;
    case 2: ringfuse::FuzzDispatch(message); break;
    case 3: ringfuse::FuzzDispatchRing(message); break;
    case 4: ringfuse::FuzzConversation(message); break;
  }
  return 0;
}
