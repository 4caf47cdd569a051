// libFuzzer target over the handover record a new process receives from the old one (or a kept
// daemon from its keeper): the messages ReceiveHandover reads from its socket, fds attached, and
// the transport's part of the record (the uring-cmd ring entries), decoded as
// SessionImpl::ServeTakenOver decodes it (transport/session_handover.cc).
//
// Input: the messages the old process sends, each after a 16-bit little-endian length
// (fuzz_checks.h); a message's first byte says how many fds go with it (fuzz_fds.h). On the
// socket each is a u32 count of record bytes and those bytes; the record bytes, strung
// together, start with the totals (magic, version, record bytes, fds).
//
// Whatever the bytes: nothing crashes, reads out of bounds or waits; a record refused says why;
// a record accepted is exactly as long as its totals announced and comes with exactly the fds
// they announced, and the encoder writes the same bytes from it (version 2; a version 1 record
// lacks only the transport's part, which then reads as empty); ring entries accepted name only
// blocks and slots there are, each once, and come with one memfd per queue; and every fd received
// is closed once nothing holds it.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "base/record_fields.h"
#include "tests/fuzz/fuzz_checks.h"
#include "tests/fuzz/fuzz_fds.h"
#include "transport/handover_record.h"
#include "transport/uring_cmd_handover.h"

namespace ringfuse::fuzz {
namespace {

using internal::HandoverRecord;
using internal::ReceivedHandover;

// The start of the record's first message (transport/handover_record.cc).
struct Totals {
  uint32_t magic;
  uint32_t version;
  uint64_t record_bytes;
  uint32_t fds;
  uint32_t reserved;
};

// The record bytes of the well-formed messages SendMessages sent, strung together as the
// receiver strings them (it stops at the first malformed one, with an error).
std::string RecordBytesSent(ConstBytes input) {
  std::string stream;
  bool malformed = false;
  ForEachMessage(input, [&](ConstBytes message) {
    if (message.empty()) return;  // not sent
    if (malformed || message.size() < 1 + sizeof(uint32_t)) {
      malformed = true;
      return;
    }
    uint32_t count;
    std::memcpy(&count, message.data() + 1, sizeof(count));
    malformed = count != message.size() - 1 - sizeof(count);
    if (!malformed) {
      stream.append(reinterpret_cast<const char*>(message.data()) + 1 + sizeof(count), count);
    }
  });
  return stream;
}

void CheckAccepted(const ReceivedHandover& received, const std::string& sent) {
  if (sent.size() < sizeof(Totals)) std::abort();
  Totals totals;
  std::memcpy(&totals, sent.data(), sizeof(totals));
  std::string encoded = internal::EncodeHandoverRecord(received.record);
  if (totals.version == 1) {
    // The transport's part, absent: an empty string and no fds.
    const std::string absent(sizeof(uint64_t) + sizeof(uint32_t), '\0');
    if (!encoded.ends_with(absent)) std::abort();
    encoded.resize(encoded.size() - absent.size());
  } else if (totals.version != 2) {
    std::abort();
  }
  if (totals.record_bytes != encoded.size() ||
      sent.compare(sizeof(Totals), encoded.size(), encoded) != 0) {
    std::abort();
  }
  if (received.fds.size() != totals.fds) std::abort();
}

// What ServeTakenOver does with the transport's part: its fds come right after the connection's.
void DecodeTheTransportsPart(ReceivedHandover& received) {
  const HandoverRecord& record = received.record;
  const size_t transport_end = 1 + size_t{record.transport_fds};
  if (received.fds.empty() || transport_end > received.fds.size() ||
      record.transport_bytes.empty()) {
    return;
  }
  std::vector<base::UniqueFd> fds;
  for (size_t i = 1; i < transport_end; ++i) fds.push_back(std::move(received.fds[i]));
  absl::StatusOr<internal::RingsHandover> rings =
      internal::DecodeRingsHandover(record.transport_bytes, std::move(fds));
  if (!rings.ok()) {
    if (rings.status().message().empty()) std::abort();
    return;
  }
  if (internal::EncodeRingsHandover(*rings) != record.transport_bytes) std::abort();
  if (rings->fds.size() != rings->queues.size()) std::abort();
  for (const internal::HandedQueue& queue : rings->queues) {
    std::vector<std::pair<uint32_t, uint32_t>> seen;
    for (const internal::HandedEntry& entry : queue.entries) {
      if (entry.block >= queue.blocks.size() || entry.slot >= queue.blocks[entry.block].count) {
        std::abort();
      }
      seen.emplace_back(entry.block, entry.slot);
    }
    std::sort(seen.begin(), seen.end());
    if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) std::abort();
  }
}

void FuzzHandoverRecord(ConstBytes input) {
  {
    SocketPair pair;
    SendMessages(pair.fuzzer.get(), input);
    absl::StatusOr<ReceivedHandover> received = internal::ReceiveHandover(pair.tested.get());
    if (!received.ok()) {
      if (received.status().message().empty()) std::abort();
    } else {
      CheckAccepted(*received, RecordBytesSent(input));
      DecodeTheTransportsPart(*received);
    }
  }
  if (!HandedFdsClosed()) std::abort();
}

}  // namespace
}  // namespace ringfuse::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A private, exactly-sized copy so that any overread is caught by ASan.
  std::vector<std::byte> copy(size);
  if (size > 0) std::memcpy(copy.data(), data, size);
  ringfuse::fuzz::FuzzHandoverRecord(copy);
  return 0;
}
