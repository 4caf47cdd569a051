// ConnectionKeeper (ringfuse/keeper.h): the keeper's half of the keeper protocol
// (transport/keeper_protocol.h).
#include <poll.h>

#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_format.h"
#include "ringfuse/keeper.h"
#include "ringfuse/log.h"
#include "transport/handover_record.h"
#include "transport/keeper_protocol.h"

namespace ringfuse {

using internal::KeeperDeposit;
using internal::KeeperFresh;
using internal::KeeperHello;
using internal::KeeperKept;
using internal::KeeperNote;
using internal::ReceivedHandover;

struct ConnectionKeeper::Kept {
  // The record; fds[0] the /dev/fuse fd, the rest the application's.
  std::optional<ReceivedHandover> connection;
  std::string note;
  uint32_t handed_out = 0;
  bool daemon_serves = false;

  absl::Status Answer(int socket);
  absl::Status Take(int socket);
};

ConnectionKeeper::ConnectionKeeper() : kept_(std::make_unique<Kept>()) {}
ConnectionKeeper::~ConnectionKeeper() = default;

bool ConnectionKeeper::holds_connection() const { return kept_->connection.has_value(); }
uint32_t ConnectionKeeper::recoveries() const { return kept_->handed_out; }
bool ConnectionKeeper::daemon_serves() const { return kept_->daemon_serves; }
void ConnectionKeeper::NewDaemon() { kept_->daemon_serves = false; }

int ConnectionKeeper::dev_fd() const {
  return kept_->connection ? kept_->connection->fds[0].get() : -1;
}

const std::string& ConnectionKeeper::mountpoint() const {
  static const std::string kNone;
  return kept_->connection ? kept_->connection->record.mountpoint : kNone;
}

bool ConnectionKeeper::connection_alive() const {
  if (!kept_->connection) return false;
  // No events asked for: /dev/fuse polls POLLERR once the connection ended.
  pollfd check{dev_fd(), 0, 0};
  return ::poll(&check, 1, 0) >= 0 && (check.revents & (POLLERR | POLLNVAL)) == 0;
}

absl::Status ConnectionKeeper::ServeOne(int socket) {
  absl::StatusOr<internal::DaemonMessage> message = internal::ReceiveDaemonMessage(socket);
  if (!message.ok()) return message.status();
  if (std::holds_alternative<KeeperHello>(*message)) return kept_->Answer(socket);
  if (std::holds_alternative<KeeperDeposit>(*message)) return kept_->Take(socket);
  if (auto* note = std::get_if<KeeperNote>(&*message)) {
    kept_->note = std::move(note->bytes);
    return absl::OkStatus();
  }
  Log(LogLevel::kInfo, "keeper: %s is served again (recovery %u)", mountpoint(), kept_->handed_out);
  kept_->daemon_serves = true;
  return absl::OkStatus();
}

absl::Status ConnectionKeeper::Kept::Answer(int socket) {
  if (!connection) return internal::SendKeeperAnswer(socket, KeeperFresh{});
  ++handed_out;
  if (absl::Status sent = internal::SendKeeperAnswer(socket, KeeperKept{handed_out, note});
      !sent.ok()) {
    return sent;
  }
  std::vector<int> fds;
  for (const base::UniqueFd& fd : connection->fds) fds.push_back(fd.get());
  return internal::SendHandover(socket, connection->record, fds);
}

absl::Status ConnectionKeeper::Kept::Take(int socket) {
  absl::StatusOr<ReceivedHandover> deposited = internal::ReceiveHandover(socket);
  if (!deposited.ok()) return deposited.status();
  if (deposited->fds.empty() || deposited->fds.size() > 1 + internal::kMaxKeptFds) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a deposit carries the /dev/fuse fd and at most %d more, not %d fds",
                        internal::kMaxKeptFds, deposited->fds.size()));
  }
  if (connection) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the keeper holds %s already; a second deposit is refused", connection->record.mountpoint));
  }
  connection = std::move(*deposited);
  daemon_serves = true;
  return absl::OkStatus();
}

}  // namespace ringfuse
