#include "transport/connection_keeper.h"

#include <poll.h>

#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_format.h"
#include "transport/keeper_protocol.h"
#include "transport/log.h"

namespace ringfuse::internal {

int ConnectionKeeper::dev_fd() const { return connection_ ? connection_->fds[0].get() : -1; }

const std::string& ConnectionKeeper::mountpoint() const {
  static const std::string kNone;
  return connection_ ? connection_->record.mountpoint : kNone;
}

bool ConnectionKeeper::connection_alive() const {
  if (!connection_) return false;
  // No events asked for: /dev/fuse polls POLLERR once the connection ended.
  pollfd check{dev_fd(), 0, 0};
  return ::poll(&check, 1, 0) >= 0 && (check.revents & (POLLERR | POLLNVAL)) == 0;
}

absl::Status ConnectionKeeper::ServeOne(int socket) {
  absl::StatusOr<DaemonMessage> message = ReceiveDaemonMessage(socket);
  if (!message.ok()) return message.status();
  if (std::holds_alternative<KeeperHello>(*message)) return Answer(socket);
  if (std::holds_alternative<KeeperDeposit>(*message)) return Take(socket);
  if (auto* note = std::get_if<KeeperNote>(&*message)) {
    note_ = std::move(note->bytes);
    return absl::OkStatus();
  }
  Log(LogLevel::kInfo, "keeper: %s is served again (recovery %u)", mountpoint(), handed_out_);
  daemon_serves_ = true;
  return absl::OkStatus();
}

absl::Status ConnectionKeeper::Answer(int socket) {
  if (!connection_) return SendKeeperAnswer(socket, KeeperFresh{});
  ++handed_out_;
  if (absl::Status sent = SendKeeperAnswer(socket, KeeperKept{handed_out_, note_}); !sent.ok()) {
    return sent;
  }
  std::vector<int> fds;
  for (const UniqueFd& fd : connection_->fds) fds.push_back(fd.get());
  return SendHandover(socket, connection_->record, fds);
}

absl::Status ConnectionKeeper::Take(int socket) {
  absl::StatusOr<ReceivedHandover> deposited = ReceiveHandover(socket);
  if (!deposited.ok()) return deposited.status();
  if (deposited->fds.empty() || deposited->fds.size() > 1 + kMaxKeptFds) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a deposit carries the /dev/fuse fd and at most %d more, not %d fds",
                        kMaxKeptFds, deposited->fds.size()));
  }
  if (connection_) {
    return absl::FailedPreconditionError(
        absl::StrFormat("the keeper holds %s already; a second deposit is refused", mountpoint()));
  }
  connection_ = std::move(*deposited);
  daemon_serves_ = true;
  return absl::OkStatus();
}

}  // namespace ringfuse::internal
