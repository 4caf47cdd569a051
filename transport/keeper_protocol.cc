#include "transport/keeper_protocol.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include "absl/strings/str_format.h"
#include "base/deadline.h"
#include "base/errno_status.h"
#include "base/reader.h"
#include "base/record_fields.h"
#include "transport/fd_passing.h"

namespace ringfuse::internal {
namespace {

// The kind each message starts with; one list for both directions.
enum class Kind : uint32_t {
  kHello = 1,
  kDeposit = 2,
  kNote = 3,
  kServing = 4,
  kFresh = 5,
  kKept = 6,
};

// A kind, a u32, and a note's bytes: the largest message.
constexpr size_t kMaxMessage = 2 * sizeof(uint32_t) + sizeof(uint64_t) + kMaxKeptNote;

absl::Status Send(int socket, const std::string& message) {
  if (::send(socket, message.data(), message.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(message.size())) {
    return base::ErrnoStatus(errno, "cannot write to the keeper's socket");
  }
  return absl::OkStatus();
}

std::string Start(Kind kind) {
  std::string message;
  base::PutField(message, static_cast<uint32_t>(kind));
  return message;
}

std::string EncodeNote(Kind kind, const std::string& note) {
  std::string message = Start(kind);
  base::PutString(message, note);
  return message;
}

absl::Status Malformed(std::string_view what) {
  return absl::InvalidArgumentError(absl::StrFormat("malformed keeper message: %s", what));
}

// One message without fds (any that come are closed); an empty one means the peer closed.
absl::StatusOr<std::vector<std::byte>> ReceiveBytes(int socket) {
  absl::StatusOr<ReceivedMessage> message = ReceiveWithFds(socket, kMaxMessage, 0);
  if (!message.ok()) return message.status();
  return std::move(message->bytes);
}

}  // namespace

absl::Status SendDaemonMessage(int socket, const DaemonMessage& message) {
  if (const auto* note = std::get_if<KeeperNote>(&message)) {
    if (note->bytes.size() > kMaxKeptNote) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "a kept note holds at most %d bytes, not %d", kMaxKeptNote, note->bytes.size()));
    }
    return Send(socket, EncodeNote(Kind::kNote, note->bytes));
  }
  if (std::holds_alternative<KeeperHello>(message)) return Send(socket, Start(Kind::kHello));
  if (std::holds_alternative<KeeperDeposit>(message)) return Send(socket, Start(Kind::kDeposit));
  return Send(socket, Start(Kind::kServing));
}

absl::StatusOr<DaemonMessage> ReceiveDaemonMessage(int socket) {
  absl::StatusOr<std::vector<std::byte>> bytes = ReceiveBytes(socket);
  if (!bytes.ok()) return bytes.status();
  if (bytes->empty()) return absl::NotFoundError("the daemon closed the keeper's socket");
  base::Reader in(*bytes);
  uint32_t kind = 0;
  if (!base::GetField(in, kind)) return Malformed("shorter than its kind");
  DaemonMessage message;
  switch (static_cast<Kind>(kind)) {
    case Kind::kHello: message = KeeperHello{}; break;
    case Kind::kDeposit: message = KeeperDeposit{}; break;
    case Kind::kServing: message = KeeperServing{}; break;
    case Kind::kNote: {
      KeeperNote note;
      if (!base::GetString(in, note.bytes)) return Malformed("a note shorter than its length");
      // The keeper hands the note back in its answer, which a daemon reads as one message of
      // at most kMaxMessage bytes: a longer note would leave every daemon after a crash
      // unable to read its keeper's answer, and so unable to start.
      if (note.bytes.size() > kMaxKeptNote) {
        return Malformed(absl::StrFormat("a note of %d bytes; a keeper holds at most %d",
                                         note.bytes.size(), kMaxKeptNote));
      }
      message = std::move(note);
      break;
    }
    default: return Malformed(absl::StrFormat("kind %u is not one a daemon sends", kind));
  }
  if (in.remaining() != 0) return Malformed("longer than its kind's fields");
  return message;
}

absl::Status SendKeeperAnswer(int socket, const KeeperAnswer& answer) {
  const auto* kept = std::get_if<KeeperKept>(&answer);
  if (kept == nullptr) return Send(socket, Start(Kind::kFresh));
  std::string message = Start(Kind::kKept);
  base::PutField(message, kept->incarnation);
  base::PutString(message, kept->note);
  return Send(socket, message);
}

absl::StatusOr<KeeperAnswer> ReceiveKeeperAnswer(int socket, absl::Duration timeout) {
  pollfd ready{socket, POLLIN, 0};
  const base::Deadline deadline(timeout);
  int polled;
  do {
    polled = ::poll(&ready, 1, static_cast<int>(absl::ToInt64Milliseconds(deadline.left())));
  } while (polled < 0 && errno == EINTR);
  if (polled < 0) return base::ErrnoStatus(errno, "waiting for the keeper");
  if (polled == 0) {
    return absl::DeadlineExceededError(
        absl::StrFormat("the keeper did not answer within %s", absl::FormatDuration(timeout)));
  }
  absl::StatusOr<std::vector<std::byte>> bytes = ReceiveBytes(socket);
  if (!bytes.ok()) return bytes.status();
  if (bytes->empty()) return absl::UnavailableError("the keeper closed its socket");
  base::Reader in(*bytes);
  uint32_t kind = 0;
  if (!base::GetField(in, kind)) return Malformed("shorter than its kind");
  KeeperAnswer answer;
  if (static_cast<Kind>(kind) == Kind::kFresh) {
    answer = KeeperFresh{};
  } else if (static_cast<Kind>(kind) == Kind::kKept) {
    KeeperKept kept;
    if (!base::GetField(in, kept.incarnation) || !base::GetString(in, kept.note)) {
      return Malformed("a kept connection's header ends early");
    }
    answer = std::move(kept);
  } else {
    return Malformed(absl::StrFormat("kind %u is not one a keeper sends", kind));
  }
  if (in.remaining() != 0) return Malformed("longer than its kind's fields");
  return answer;
}

}  // namespace ringfuse::internal
