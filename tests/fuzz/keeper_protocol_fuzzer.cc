// libFuzzer target over the keeper protocol (transport/keeper_protocol.h) from both ends: what a
// keeper (ConnectionKeeper, under ringfuse-ctl supervise) does with the messages of the daemon it
// keeps, and what a kept daemon does with its keeper's answer and the connection after it
// (SessionImpl::StartKept, transport/session_keeper.cc).
//
// Input: one mode byte, then what the other end sends. Modes: 0, a daemon's messages to a keeper
// (hello, deposit and the handover after it, note, serving), served one by one until one is
// refused or the daemon is gone; 1, a keeper's answer to a daemon, and the handover after it; in
// both, messages each after a 16-bit little-endian length, the first byte of each the number of
// fds that go with it (fuzz_fds.h). 2, one daemon message, the rest of the input, decoded alone
// (unframed, so that it may be as long as the largest a keeper reads); 3, the same, a note of the
// rest of the input framed as a daemon frames one (its kind and length), of any size.
//
// Whatever the bytes: nothing crashes, reads out of bounds or waits; a message refused says
// why; one accepted encodes back to the same bytes, and a note accepted is one a keeper holds
// and can hand back; a keeper answers each hello with an answer its daemon reads: fresh while
// it holds no connection, else kept, counting the recoveries, with the connection it holds; and
// every fd received is closed once nothing holds it.
#include <sys/socket.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/record_fields.h"
#include "ringfuse/keeper.h"
#include "tests/fuzz/fuzz_checks.h"
#include "tests/fuzz/fuzz_fds.h"
#include "transport/handover_record.h"
#include "transport/keeper_protocol.h"

namespace ringfuse::fuzz {
namespace {

using internal::KeeperAnswer;
using internal::KeeperFresh;
using internal::KeeperKept;

// The bytes one message left as, read from the far end of a fresh pair by `send`.
template <typename Send>
std::vector<std::byte> Encoded(Send send) {
  SocketPair pair;
  if (!send(pair.tested.get()).ok()) std::abort();
  std::vector<std::byte> bytes(2 * internal::kMaxKeptNote);
  const ssize_t length = ::recv(pair.fuzzer.get(), bytes.data(), bytes.size(), MSG_DONTWAIT);
  if (length < 0) std::abort();
  bytes.resize(static_cast<size_t>(length));
  return bytes;
}

bool SameBytes(const std::vector<std::byte>& bytes, ConstBytes other) {
  return bytes.size() == other.size() &&
         (bytes.empty() || std::memcmp(bytes.data(), other.data(), bytes.size()) == 0);
}

// What the keeper sent its daemon after a message, if anything: the daemon must read it.
void CheckKeepersAnswer(const ConnectionKeeper& keeper, int daemon_end) {
  absl::StatusOr<KeeperAnswer> answer =
      internal::ReceiveKeeperAnswer(daemon_end, absl::ZeroDuration());
  if (absl::IsDeadlineExceeded(answer.status())) return;  // the message asked for no answer
  if (!answer.ok()) std::abort();
  const KeeperKept* kept = std::get_if<KeeperKept>(&*answer);
  if (kept == nullptr) {
    if (keeper.holds_connection()) std::abort();
    return;
  }
  if (!keeper.holds_connection() || kept->incarnation != keeper.recoveries()) std::abort();
  absl::StatusOr<internal::ReceivedHandover> connection = internal::ReceiveHandover(daemon_end);
  if (!connection.ok() || connection->fds.empty() ||
      connection->record.mountpoint != keeper.mountpoint()) {
    std::abort();
  }
}

void FuzzKeeper(ConstBytes messages) {
  SocketPair pair;
  SendMessages(pair.fuzzer.get(), messages);
  ConnectionKeeper keeper;
  for (;;) {
    const absl::Status served = keeper.ServeOne(pair.tested.get());
    if (!served.ok()) {
      if (served.message().empty()) std::abort();
      return;
    }
    CheckKeepersAnswer(keeper, pair.fuzzer.get());
  }
}

// The first message SendMessages sends: its bytes, and whether fds go with it.
std::optional<std::pair<ConstBytes, bool>> FirstSent(ConstBytes messages) {
  std::optional<std::pair<ConstBytes, bool>> first;
  ForEachMessage(messages, [&](ConstBytes message) {
    if (!first && !message.empty()) {
      first.emplace(message.subspan(1), (std::to_integer<int>(message[0]) & 3) != 0);
    }
  });
  return first;
}

void FuzzDaemon(ConstBytes messages) {
  SocketPair pair;
  SendMessages(pair.fuzzer.get(), messages);
  absl::StatusOr<KeeperAnswer> answer =
      internal::ReceiveKeeperAnswer(pair.tested.get(), absl::Seconds(10));
  if (!answer.ok()) {
    if (answer.status().message().empty()) std::abort();
    return;
  }
  const std::optional<std::pair<ConstBytes, bool>> first = FirstSent(messages);
  if (!first || first->second) std::abort();  // an answer with fds is refused
  const std::vector<std::byte> encoded =
      Encoded([&](int socket) { return internal::SendKeeperAnswer(socket, *answer); });
  if (!SameBytes(encoded, first->first)) std::abort();
  const KeeperKept* kept = std::get_if<KeeperKept>(&*answer);
  if (kept == nullptr) return;
  if (kept->note.size() > internal::kMaxKeptNote) std::abort();
  absl::StatusOr<internal::ReceivedHandover> connection =
      internal::ReceiveHandover(pair.tested.get());
  if (!connection.ok() && connection.status().message().empty()) std::abort();
}

void FuzzDaemonMessage(ConstBytes message) {
  SocketPair pair;
  if (!message.empty() && !SendMessage(pair.fuzzer.get(), message, 0)) return;
  if (::shutdown(pair.fuzzer.get(), SHUT_WR) != 0) std::abort();
  absl::StatusOr<internal::DaemonMessage> decoded =
      internal::ReceiveDaemonMessage(pair.tested.get());
  if (!decoded.ok()) {
    if (decoded.status().message().empty()) std::abort();
    return;
  }
  if (const auto* note = std::get_if<internal::KeeperNote>(&*decoded)) {
    // A keeper hands the note back in its answer, which the daemon must be able to read.
    if (note->bytes.size() > internal::kMaxKeptNote) std::abort();
  }
  const std::vector<std::byte> encoded =
      Encoded([&](int socket) { return internal::SendDaemonMessage(socket, *decoded); });
  if (!SameBytes(encoded, message)) std::abort();
}

// A note of `bytes`, as a daemon that does not hold to kMaxKeptNote would send it.
std::vector<std::byte> NoteOf(ConstBytes bytes) {
  std::string message;
  base::PutField(message, uint32_t{3});  // the note's kind (keeper_protocol.cc)
  base::PutString(message,
                  std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  const auto* begin = reinterpret_cast<const std::byte*>(message.data());
  return std::vector<std::byte>(begin, begin + message.size());
}

void FuzzKeeperProtocol(ConstBytes input) {
  if (input.empty()) return;
  switch (std::to_integer<int>(input[0]) % 4) {
    case 0: FuzzKeeper(input.subspan(1)); break;
    case 1: FuzzDaemon(input.subspan(1)); break;
    case 2: FuzzDaemonMessage(input.subspan(1)); break;
    case 3: FuzzDaemonMessage(NoteOf(input.subspan(1))); break;
  }
  if (!HandedFdsClosed()) std::abort();
}

}  // namespace
}  // namespace ringfuse::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A private, exactly-sized copy so that any overread is caught by ASan.
  std::vector<std::byte> copy(size);
  if (size > 0) std::memcpy(copy.data(), data, size);
  ringfuse::fuzz::FuzzKeeperProtocol(copy);
  return 0;
}
