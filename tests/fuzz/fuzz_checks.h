// What the fuzz targets that dispatch check on every reply and every message, shared by them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "protocol/dispatcher.h"
#include "ringfuse/protocol/reply_channel.h"
#include "ringfuse/request.h"

namespace ringfuse::fuzz {

// Aborts (the fuzzer reports it) if a reply breaks the kernel's rules: an error in (-512, 0],
// and no body with an error.
inline void CheckReplyShape(int32_t error, std::span<const ConstBytes> body) {
  if (error > 0 || error <= -512) std::abort();
  size_t size = 0;
  for (ConstBytes part : body) size += part.size();
  if (error != 0 && size != 0) std::abort();
}

// How many replies the kernel waits for after sending `message` (with its header in `header`):
// derived from the opcode table alone, not from the parser under test.
inline int RepliesExpected(ConstBytes header) {
  if (header.size() < 16) return 0;  // no unique to answer
  uint32_t opcode;
  std::memcpy(&opcode, header.data() + 4, sizeof(opcode));
  const std::optional<OpcodeInfo> info = LookupOpcode(opcode);
  return !info || info->replies ? 1 : 0;
}

// Checks every reply's shape and counts replies by unique, from any thread.
class CountingChannel : public ReplyChannel {
 public:
  void SendReply(const ReplyTarget& target, int32_t error,
                 std::span<const ConstBytes> body) override {
    CheckReplyShape(error, body);
    absl::MutexLock lock(&mutex_);
    ++replies_[target.unique];
    errors_[target.unique] = error;
  }
  int RepliesTo(uint64_t unique) {
    absl::MutexLock lock(&mutex_);
    return replies_[unique];
  }
  int32_t ErrorOf(uint64_t unique) {
    absl::MutexLock lock(&mutex_);
    return errors_[unique];
  }
  size_t UniquesAnswered() {
    absl::MutexLock lock(&mutex_);
    size_t answered = 0;
    for (const auto& [unique, count] : replies_) answered += count > 0;
    return answered;
  }

 private:
  absl::Mutex mutex_;
  std::map<uint64_t, int> replies_ ABSL_GUARDED_BY(mutex_);
  std::map<uint64_t, int32_t> errors_ ABSL_GUARDED_BY(mutex_);
};

class NullDiagnostics : public internal::Diagnostics {
 public:
  void Report(std::string_view /*line*/) override {}
};

// What Linux 6.18 offers at INIT.
inline wire::InitIn KernelOffer() {
  wire::InitIn offer{};
  offer.major = 7;
  offer.minor = 45;
  offer.max_readahead = 1 << 17;
  offer.flags = 0x73fffffb;
  offer.flags2 = 0x7fd;
  return offer;
}

// INIT with `offer`, as the kernel sends it first.
inline void SendInit(internal::Dispatcher& dispatcher, const wire::InitIn& offer) {
  wire::InHeader init_header{};
  init_header.len = sizeof(wire::InHeader) + sizeof(wire::InitIn);
  init_header.opcode = static_cast<uint32_t>(Opcode::kInit);
  init_header.unique = 2;
  std::byte init[sizeof(wire::InHeader) + sizeof(wire::InitIn)];
  std::memcpy(init, &init_header, sizeof(init_header));
  std::memcpy(init + sizeof(init_header), &offer, sizeof(offer));
  dispatcher.Dispatch(init, internal::Delivery{});
}

// The bytes of `value` (a wire struct), as a request carries them.
template <typename T>
std::string_view BytesOf(const T& value) {
  return {reinterpret_cast<const char*>(&value), sizeof(value)};
}

// A request as the kernel sends it, from root: the header, then `body`.
inline std::vector<std::byte> MakeRequest(Opcode opcode, uint64_t unique, uint64_t nodeid,
                                          std::string_view body) {
  wire::InHeader header{};
  header.len = static_cast<uint32_t>(sizeof(header) + body.size());
  header.opcode = static_cast<uint32_t>(opcode);
  header.unique = unique;
  header.nodeid = nodeid;
  std::vector<std::byte> message(header.len);
  std::memcpy(message.data(), &header, sizeof(header));
  if (!body.empty()) std::memcpy(message.data() + sizeof(header), body.data(), body.size());
  return message;
}

// The arguments of the requests the fuzzers make themselves, with the fields they set.
inline wire::ReadIn ReadArgs(uint64_t fh, uint32_t size) {
  wire::ReadIn read{};
  read.fh = fh;
  read.size = size;
  return read;
}
inline wire::ReleaseIn ReleaseArgs(uint64_t fh) {
  wire::ReleaseIn release{};
  release.fh = fh;
  return release;
}
inline wire::OpenIn OpenArgs(uint32_t flags) {
  wire::OpenIn open{};
  open.flags = flags;
  return open;
}

// Calls `each` with every message of `input`, each after a 16-bit little-endian length (the
// last one cut short where the input ends).
template <typename Each>
void ForEachMessage(ConstBytes input, Each each) {
  while (input.size() >= 2) {
    const size_t length =
        std::min<size_t>(std::to_integer<size_t>(input[0]) | std::to_integer<size_t>(input[1]) << 8,
                         input.size() - 2);
    each(input.subspan(2, length));
    input = input.subspan(2 + length);
  }
}

}  // namespace ringfuse::fuzz
