// libFuzzer target over the parser and the dispatcher.
//
// Input: one mode byte, then a message. Modes: parse the message as /dev/fuse bytes under an old
// and the current protocol; split it the way FUSE-over-io_uring delivers it; or feed it to a
// dispatcher that has already answered INIT, with a handler that answers every request.
// Whatever the bytes, nothing may crash, read out of bounds, or send a reply the kernel rejects.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "protocol/describe.h"
#include "protocol/dispatcher.h"
#include "protocol/request.h"

namespace ringfuse {
namespace {

// Fails loudly (the fuzzer reports it) if a reply breaks the kernel's rules.
class CheckingChannel : public ReplyChannel {
 public:
  void SendReply(const ReplyTarget& /*target*/, int32_t error,
                 std::span<const ConstBytes> body) override {
    if (error > 0 || error <= -512) std::abort();
    size_t size = 0;
    for (ConstBytes part : body) size += part.size();
    if (error != 0 && size != 0) std::abort();
    ++replies;
  }
  int replies = 0;
};

class NullDiagnostics : public Diagnostics {
 public:
  void Report(std::string_view /*line*/) override {}
};

// Answers every operation that takes data with something of the right shape.
class AnsweringHandler : public Handler {
 public:
  void Lookup(const RequestContext&, const op::Lookup& args, EntryReply reply) override {
    if (args.name.size() % 2) return reply.Error(ENOENT);
    reply.Ok(MakeEntry(2, 1, abi::Attr{}, {1, 0}, {1, 0}));
  }
  void Readdir(const RequestContext&, const op::Readdir& args, DataReply reply) override {
    std::byte buffer[256];
    DirentPacker packer(std::span(buffer, std::min<size_t>(args.in.size, sizeof(buffer))));
    while (packer.Add(packer.count() + 2, packer.count() + 1, 0, "entry")) {
    }
    reply.Ok(packer.packed());
  }
  void Write(const RequestContext&, const op::Write& args, CountReply reply) override {
    reply.Ok(args.data.size());
  }
  void Getxattr(const RequestContext&, const op::Getxattr& args, XattrReply reply) override {
    if (args.in.size == 0) return reply.Size(static_cast<uint32_t>(args.name.size()));
    reply.Data(AsBytes(args.name.substr(0, std::min<size_t>(args.in.size, args.name.size()))));
  }
};

abi::InitIn KernelOffer() {
  abi::InitIn offer{};
  offer.major = 7;
  offer.minor = 45;
  offer.max_readahead = 1 << 17;
  offer.flags = 0x73fffffb;
  offer.flags2 = 0x7fd;
  return offer;
}

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
  const size_t header = std::min<size_t>(message.size(), sizeof(abi::InHeader));
  const size_t op_in = std::min<size_t>(message.size() - header, abi::kUringOpInOutSize);
  ParseResult result = ParseRingRequest(message.first(header), message.subspan(header, op_in),
                                        message.subspan(header + op_in), ParseContext{});
  if (const Request* request = std::get_if<Request>(&result)) (void)DescribeRequest(*request);
}

void FuzzDispatch(ConstBytes message) {
  CheckingChannel channel;
  NullDiagnostics diagnostics;
  AnsweringHandler handler;
  Dispatcher dispatcher(handler, channel, diagnostics, InitWishes{});
  abi::InHeader init_header{};
  init_header.len = sizeof(abi::InHeader) + sizeof(abi::InitIn);
  init_header.opcode = static_cast<uint32_t>(Opcode::kInit);
  init_header.unique = 2;
  std::byte init[sizeof(abi::InHeader) + sizeof(abi::InitIn)];
  const abi::InitIn offer = KernelOffer();
  std::memcpy(init, &init_header, sizeof(init_header));
  std::memcpy(init + sizeof(init_header), &offer, sizeof(offer));
  dispatcher.Dispatch(init, Delivery{});
  if (dispatcher.state() != ConnectionState::kRunning) std::abort();
  dispatcher.Dispatch(message, Delivery{});
}

}  // namespace
}  // namespace ringfuse

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // A private, exactly-sized copy so that any overread is caught by ASan.
  std::unique_ptr<std::byte[]> copy(new std::byte[size - 1]);
  if (size > 1) std::memcpy(copy.get(), data + 1, size - 1);
  const ringfuse::ConstBytes message(copy.get(), size - 1);
  switch (data[0] % 3) {
    case 0: ringfuse::FuzzParse(message); break;
    case 1: ringfuse::FuzzRingSplit(message); break;
    case 2: ringfuse::FuzzDispatch(message); break;
  }
  return 0;
}
