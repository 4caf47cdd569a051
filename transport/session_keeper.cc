// Session::StartKept: a session whose connection a keeper holds too, so that it outlives a crash
// of this process (ringfuse/keeper.h).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>
#include <variant>

#include "absl/strings/str_format.h"
#include "base/errno_status.h"
#include "ringfuse/notify.h"
#include "transport/keeper_protocol.h"
#include "transport/log.h"
#include "transport/session_impl.h"

namespace ringfuse::internal {
namespace {

// For the keeper's answer to the hello: it only looks at what it holds.
constexpr absl::Duration kKeeperTimeout = absl::Seconds(10);

// A kept session's transport: one whose requests in flight outlive this process.
absl::StatusOr<SessionOptions> KeptOptions(SessionOptions options) {
  if (options.transport == TransportKind::kUringCmd) {
    return absl::InvalidArgumentError(
        "the uring-cmd transport cannot be kept: its ring entries, and the requests they hold, "
        "belong to the io_uring of the process that dies; use threads or uring");
  }
  if (options.mount.auto_unmount) {
    return absl::InvalidArgumentError(
        "auto_unmount cannot be kept: its fusermount3 helper unmounts as soon as the process "
        "that mounted dies, which is what a kept session outlives");
  }
  if (options.transport == TransportKind::kAuto) options.transport = TransportKind::kUring;
  options.transport_options.clone_fds = false;
  return options;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SessionImpl>> SessionImpl::StartKept(
    base::UniqueFd keeper, const SessionOptions& given, Handler& handler,
    const RecoverAfterCrash& recover, const std::vector<int>& kept_fds) {
  absl::StatusOr<SessionOptions> options = KeptOptions(given);
  if (!options.ok()) return options.status();
  if (kept_fds.size() > kMaxKeptFds) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a keeper holds at most %d fds of the application, not %d", kMaxKeptFds, kept_fds.size()));
  }
  // Not for the programs this one starts (fusermount3).
  if (::fcntl(keeper.get(), F_SETFD, FD_CLOEXEC) != 0) {
    return base::ErrnoStatus(errno, "the keeper's socket");
  }
  if (absl::Status said = SendDaemonMessage(keeper.get(), KeeperHello{}); !said.ok()) return said;
  absl::StatusOr<KeeperAnswer> answer = ReceiveKeeperAnswer(keeper.get(), kKeeperTimeout);
  if (!answer.ok()) return answer.status();
  if (std::holds_alternative<KeeperFresh>(*answer)) {
    return StartKeptFresh(std::move(keeper), *options, handler, kept_fds);
  }
  return StartRecovered(std::move(keeper), std::get<KeeperKept>(*answer), *options, handler,
                        recover);
}

absl::StatusOr<std::unique_ptr<SessionImpl>> SessionImpl::StartKeptFresh(
    base::UniqueFd keeper, const SessionOptions& options, Handler& handler,
    const std::vector<int>& kept_fds) {
  absl::StatusOr<std::unique_ptr<SessionImpl>> agreed = MountAndInit(options, handler);
  if (!agreed.ok()) return agreed.status();
  std::unique_ptr<SessionImpl> session = std::move(*agreed);
  session->keeper_ = std::move(keeper);
  // Before the first request is read: from then on nothing read dies with this process.
  absl::Status serving = session->CheckKernelResends();
  if (serving.ok()) serving = session->DepositWithKeeper(kept_fds);
  if (serving.ok()) serving = session->StartTransport(options);
  if (!serving.ok()) {
    session->Stop();
    return serving;
  }
  return session;
}

absl::StatusOr<std::unique_ptr<SessionImpl>> SessionImpl::StartRecovered(
    base::UniqueFd keeper, const KeeperKept& kept, const SessionOptions& options, Handler& handler,
    const RecoverAfterCrash& recover) {
  absl::StatusOr<ReceivedHandover> received = ReceiveHandover(keeper.get());
  if (!received.ok()) return received.status();
  if (received->fds.empty()) return absl::DataLossError("the keeper sent no /dev/fuse fd");
  HandoverRecord& record = received->record;
  std::unique_ptr<SessionImpl> session(
      new SessionImpl(received->fds[0].get(), handler, options.init));
  // Until it serves, nothing here unmounts: the keeper holds the mount for the next try.
  session->handed_over_ = true;
  session->dispatcher_.set_observer(options.observer);
  session->mount_.emplace(Mount::Adopt(std::move(received->fds[0]), std::move(record.mountpoint),
                                       record.method, record.connection_id));
  CrashRecovery crash{kept.incarnation, kept.note, {}};
  for (size_t i = 1; i < received->fds.size(); ++i) crash.fds.push_back(received->fds[i].release());
  if (absl::Status serving = session->ServeRecovered(record, crash, options, recover);
      !serving.ok()) {
    session->mount_->LeaveMounted();
    return serving;
  }
  session->handed_over_ = false;
  session->incarnation_ = kept.incarnation;
  session->keeper_ = std::move(keeper);
  if (absl::Status said = SendDaemonMessage(session->keeper_.get(), KeeperServing{}); !said.ok()) {
    Log(LogLevel::kWarning, "telling the keeper that %s is served again: %s",
        session->mount_->mountpoint(), said.ToString());
  }
  return session;
}

absl::Status SessionImpl::ServeRecovered(HandoverRecord& record, const CrashRecovery& crash,
                                         const SessionOptions& options,
                                         const RecoverAfterCrash& recover) {
  dispatcher_.Agree(record.negotiated);
  if (absl::Status checked = CheckInit(options.backing_files); !checked.ok()) {
    for (int fd : crash.fds) ::close(fd);  // the callback that would own them never runs
    return checked;
  }
  absl::StatusOr<Recovered> recovered = recover(crash);
  if (!recovered.ok()) return recovered.status();
  Log(LogLevel::kInfo, "recovering %s after a crash (incarnation %u)", mount_->mountpoint(),
      crash.incarnation);
  // Before any request is served: a name looked up from now on reaches this process's nodes.
  if (!recovered->names_still_valid) {
    if (absl::Status staled = notifier_->IncEpoch(); !staled.ok()) {
      Log(LogLevel::kWarning,
          "recovering %s: the kernel's cached names stay (%s); a path walk that reaches a node "
          "of the dead process gets ESTALE, on which the kernel walks again from the root",
          mount_->mountpoint(), staled.ToString());
    }
  }
  // Without it the requests the dead process had read would wait forever.
  if (absl::Status resent = notifier_->Resend(); !resent.ok()) {
    return absl::Status(resent.code(), absl::StrFormat("recovering %s: %s", mount_->mountpoint(),
                                                       resent.message()));
  }
  return StartTransport(options);
}

absl::Status SessionImpl::CheckKernelResends() const {
  const uint32_t needed = NotifyMinimumMinor(wire::NotifyCode::kResend);
  if (dispatcher_.negotiated().kernel_minor >= needed) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s cannot be kept: the kernel speaks FUSE 7.%u, and resending what a dead daemon had read "
      "(NOTIFY_RESEND) needs 7.%u",
      mount_->mountpoint(), dispatcher_.negotiated().kernel_minor, needed));
}

absl::Status SessionImpl::DepositWithKeeper(const std::vector<int>& kept_fds) {
  const HandoverRecord record{dispatcher_.negotiated(),
                              mount_->mountpoint(),
                              mount_->method(),
                              mount_->connection_id(),
                              "",
                              "",
                              0};
  std::vector<int> fds{mount_->dev_fd()};
  fds.insert(fds.end(), kept_fds.begin(), kept_fds.end());
  std::lock_guard lock(keeper_mutex_);
  if (absl::Status said = SendDaemonMessage(keeper_.get(), KeeperDeposit{}); !said.ok()) {
    return said;
  }
  return SendHandover(keeper_.get(), record, fds);
}

absl::Status SessionImpl::UpdateKeptNote(std::string_view note) {
  if (!keeper_.valid()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s is not a kept session: there is no keeper to note anything with",
                        mount_->mountpoint()));
  }
  std::lock_guard lock(keeper_mutex_);
  return SendDaemonMessage(keeper_.get(), KeeperNote{std::string(note)});
}

}  // namespace ringfuse::internal
