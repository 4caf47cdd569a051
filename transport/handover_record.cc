#include "transport/handover_record.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/deadline.h"
#include "base/errno_status.h"
#include "base/reader.h"
#include "base/record_fields.h"
#include "transport/fd_passing.h"

namespace ringfuse::internal {
namespace {

constexpr uint32_t kMagic = 0x52464844;  // "RFHD"
// Raise it whenever the record's layout changes, and keep reading the previous one: the new
// process is often a newer binary than the old.
// Version 2 added the transport's part (the uring-cmd transport's ring entries).
constexpr uint32_t kVersion = 2;
constexpr uint32_t kOldestVersion = 1;
// Record bytes per message: well within a unix socket's default send buffer.
constexpr size_t kChunk = 32 * 1024;
constexpr std::string_view kReady = "ready";
constexpr std::string_view kAck = "serving";
constexpr std::string_view kRefusal = "refused: ";

// What the first message's record starts with.
struct Totals {
  uint32_t magic = kMagic;
  uint32_t version = kVersion;
  uint64_t record_bytes = 0;
  uint32_t fds = 0;
  uint32_t reserved = 0;
};

// The fields one by one, not the struct: its layout may change between the two binaries. The
// one list of them, for writing and for reading.
template <typename AgreedRecord, typename Visit>
void ForEachField(AgreedRecord& agreed, Visit&& visit) {
  visit(agreed.kernel_minor);
  visit(agreed.minor);
  visit(agreed.kernel_flags);
  visit(agreed.flags);
  visit(agreed.max_write);
  visit(agreed.max_pages);
  visit(agreed.max_readahead);
  visit(agreed.max_background);
  visit(agreed.congestion_threshold);
  visit(agreed.time_gran);
  visit(agreed.max_stack_depth);
  visit(agreed.request_timeout);
  visit(agreed.io_uring);
}

void PutNegotiated(std::string& out, const Negotiated& agreed) {
  ForEachField(agreed, [&out](const auto& field) { base::PutField(out, field); });
}

bool GetNegotiated(base::Reader& in, Negotiated& agreed) {
  bool read = true;
  ForEachField(agreed, [&](auto& field) { read = read && base::GetField(in, field); });
  return read;
}

absl::Status Corrupt(std::string_view what) {
  return absl::DataLossError("the handover record from the old process " + std::string(what));
}

}  // namespace

std::string EncodeHandoverRecord(const HandoverRecord& record) {
  std::string out;
  PutNegotiated(out, record.negotiated);
  base::PutString(out, record.mountpoint);
  base::PutField(out, static_cast<uint32_t>(record.method));
  base::PutField(out, record.connection_id);
  base::PutString(out, record.app_bytes);
  base::PutString(out, record.transport_bytes);
  base::PutField(out, record.transport_fds);
  return out;
}

absl::StatusOr<HandoverRecord> DecodeHandoverRecord(std::string_view bytes, uint32_t version) {
  base::Reader in(ConstBytes(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()));
  HandoverRecord record;
  uint32_t method = 0;
  if (!GetNegotiated(in, record.negotiated) || !base::GetString(in, record.mountpoint) ||
      !base::GetField(in, method) || !base::GetField(in, record.connection_id) ||
      !base::GetString(in, record.app_bytes)) {
    return Corrupt("ends early");
  }
  if (version >= 2 &&
      (!base::GetString(in, record.transport_bytes) || !base::GetField(in, record.transport_fds))) {
    return Corrupt("ends early");
  }
  if (in.remaining() != 0) return Corrupt("runs on past its last field");
  if (method > static_cast<uint32_t>(MountMethod::kFusermount)) return Corrupt("names no method");
  record.method = static_cast<MountMethod>(method);
  return record;
}

absl::Status SendHandover(int socket, const HandoverRecord& record, std::span<const int> fds) {
  const std::string body = EncodeHandoverRecord(record);
  std::string stream;
  base::PutField(stream,
                 Totals{.record_bytes = body.size(), .fds = static_cast<uint32_t>(fds.size())});
  stream += body;
  size_t sent_bytes = 0, sent_fds = 0;
  while (sent_bytes < stream.size() || sent_fds < fds.size()) {
    const uint32_t count = static_cast<uint32_t>(std::min(kChunk, stream.size() - sent_bytes));
    std::string message;
    base::PutField(message, count);
    message.append(stream, sent_bytes, count);
    const size_t fd_count = std::min(kMaxFdsPerMessage, fds.size() - sent_fds);
    if (absl::Status status = SendWithFds(socket, AsBytes(std::string_view(message)),
                                          fds.subspan(sent_fds, fd_count));
        !status.ok()) {
      return status;
    }
    sent_bytes += count;
    sent_fds += fd_count;
  }
  return absl::OkStatus();
}

absl::StatusOr<ReceivedHandover> ReceiveHandover(int socket) {
  ReceivedHandover received;
  std::string stream;
  std::optional<Totals> totals;
  while (!totals || stream.size() < sizeof(Totals) + totals->record_bytes ||
         received.fds.size() < totals->fds) {
    absl::StatusOr<ReceivedMessage> message =
        ReceiveWithFds(socket, sizeof(uint32_t) + kChunk, kMaxFdsPerMessage);
    if (!message.ok()) return message.status();
    if (message->bytes.empty()) return Corrupt("stopped before its end (the old process left)");
    for (base::UniqueFd& fd : message->fds) received.fds.push_back(std::move(fd));
    base::Reader in(message->bytes);
    uint32_t count = 0;
    if (!base::GetField(in, count) || count != in.remaining())
      return Corrupt("has a malformed message");
    stream.append(reinterpret_cast<const char*>(in.rest().data()), count);
    if (!totals && stream.size() >= sizeof(Totals)) {
      totals.emplace();
      std::memcpy(&*totals, stream.data(), sizeof(Totals));
      if (totals->magic != kMagic) return Corrupt("is not one (wrong magic)");
      if (totals->version < kOldestVersion || totals->version > kVersion) {
        return Corrupt(absl::StrFormat("has format version %u; this binary reads versions %u to %u",
                                       totals->version, kOldestVersion, kVersion));
      }
    }
    if (totals && (stream.size() > sizeof(Totals) + totals->record_bytes ||
                   received.fds.size() > totals->fds)) {
      return Corrupt("carries more than it announced");
    }
  }
  absl::StatusOr<HandoverRecord> record =
      DecodeHandoverRecord(std::string_view(stream).substr(sizeof(Totals)), totals->version);
  if (!record.ok()) return record.status();
  received.record = std::move(*record);
  return received;
}

absl::Status SendHandoverAck(int socket) {
  if (::send(socket, kAck.data(), kAck.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(kAck.size())) {
    return base::ErrnoStatus(errno, "cannot tell the old process that this one serves");
  }
  return absl::OkStatus();
}

void SendHandoverRefusal(int socket, const absl::Status& why) {
  const std::string message = std::string(kRefusal) + std::string(why.message());
  (void)::send(socket, message.data(), message.size(), MSG_NOSIGNAL);
}

namespace {

// The new process's next short message: `word`, a refusal, or nothing (it went away). `step`
// names what `word` says it did, for the errors: "served", "got ready".
absl::Status AwaitWord(int socket, absl::Duration timeout, std::string_view word,
                       std::string_view step) {
  const base::Deadline deadline(timeout);
  pollfd ready{socket, POLLIN, 0};
  int polled;
  do {
    polled = ::poll(&ready, 1, static_cast<int>(absl::ToInt64Milliseconds(deadline.left())));
  } while (polled < 0 && errno == EINTR);
  if (polled == 0) {
    return absl::DeadlineExceededError(absl::StrFormat("the new process had not %s within %s", step,
                                                       absl::FormatDuration(timeout)));
  }
  char buffer[4096];
  const ssize_t length = ::recv(socket, buffer, sizeof(buffer), 0);
  if (length < 0) return base::ErrnoStatus(errno, "cannot read the new process's answer");
  const std::string_view answer(buffer, static_cast<size_t>(length));
  if (answer.starts_with(kRefusal)) {
    return absl::AbortedError(
        absl::StrFormat("the new process refused the connection, so this one serves on: %s",
                        answer.substr(kRefusal.size())));
  }
  if (answer != word) {
    return absl::AbortedError(absl::StrFormat(
        "the new process ended before it %s (it failed or was killed); this one serves on", step));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SendHandoverReady(int socket) {
  if (::send(socket, kReady.data(), kReady.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(kReady.size())) {
    return base::ErrnoStatus(errno, "cannot tell the old process that this one is ready");
  }
  return absl::OkStatus();
}

absl::Status AwaitHandoverReady(int socket, absl::Duration timeout) {
  return AwaitWord(socket, timeout, kReady, "got ready");
}

absl::Status AwaitHandoverAck(int socket, absl::Duration timeout) {
  return AwaitWord(socket, timeout, kAck, "served");
}

}  // namespace ringfuse::internal
