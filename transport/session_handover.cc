// Session::HandOver and Session::TakeOver: the two ends of a live handover (ringfuse/handover.h).
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/deadline.h"
#include "transport/handover_record.h"
#include "transport/log.h"
#include "transport/session_impl.h"
#include "transport/uring_cmd_handover.h"

namespace ringfuse::internal {

absl::StatusOr<HandoverReport> SessionImpl::HandOver(int socket, const SaveForHandover& save,
                                                     const HandoverOptions& options) {
  if (mount_->has_auto_unmount()) {
    return absl::UnimplementedError(absl::StrFormat(
        "%s cannot be handed over: it was mounted with auto_unmount, whose fusermount3 helper "
        "waits on a socket that does not travel yet",
        mount_->mountpoint()));
  }
  if (keeper_.valid()) {
    return absl::UnimplementedError(absl::StrFormat(
        "%s cannot be handed over: it is a kept session, whose keeper holds the connection; "
        "restart it by ending the process, and the keeper starts the next",
        mount_->mountpoint()));
  }
  std::shared_ptr<Transport> serving;
  {
    std::lock_guard lock(serving_mutex_);
    if (pausing_ || handed_over_ || stopping_ || !transport_) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s cannot be handed over: the session is stopping, handing over, or over",
          mount_->mountpoint()));
    }
    serving = transport_;
    pausing_ = true;
  }
  // Clients wait from the pause on, not while the new process starts.
  absl::Status stopped = serving->CanPause();
  if (stopped.ok()) stopped = AwaitHandoverReady(socket, options.takeover_timeout);
  const base::Stopwatch paused;
  if (stopped.ok()) stopped = serving->Pause(options.pause_timeout);
  if (!stopped.ok()) {
    // Nothing was stopped, or what was has started again: the transport serves on.
    std::lock_guard lock(serving_mutex_);
    pausing_ = false;
    serving_changed_.notify_all();
    return stopped;
  }
  HandoverReport report;
  if (absl::Status sent = SendConnection(socket, save, options, report); !sent.ok()) {
    Resume();
    return sent;
  }
  report.pause = paused.elapsed();
  if (backing_) UnbindBacking(*std::exchange(backing_, nullptr));
  mount_->LeaveMounted();
  // A transport that can resume in place still runs, paused: its threads end here, and a Wait
  // that is joining them returns.
  serving->Stop();
  std::lock_guard lock(serving_mutex_);
  transport_.reset();
  handed_over_ = true;
  pausing_ = false;
  serving_changed_.notify_all();
  return report;
}

absl::Status SessionImpl::SendConnection(int socket, const SaveForHandover& save,
                                         const HandoverOptions& options, HandoverReport& report) {
  const base::Stopwatch saving;
  absl::StatusOr<HandoverPayload> payload = save();
  report.save = saving.elapsed();
  if (!payload.ok()) return payload.status();
  report.state_bytes = payload->bytes.size();
  report.state_fds = payload->fds.size();
  absl::StatusOr<TransportHandover> transport = transport_->Handed();
  if (!transport.ok()) return transport.status();
  HandoverRecord record{dispatcher_.negotiated(),
                        mount_->mountpoint(),
                        mount_->method(),
                        mount_->connection_id(),
                        std::move(payload->bytes),
                        std::move(transport->bytes),
                        static_cast<uint32_t>(transport->fds.size())};
  std::vector<int> fds{mount_->dev_fd()};
  fds.insert(fds.end(), transport->fds.begin(), transport->fds.end());
  fds.insert(fds.end(), payload->fds.begin(), payload->fds.end());
  if (absl::Status sent = SendHandover(socket, record, fds); !sent.ok()) return sent;
  return AwaitHandoverAck(socket, options.takeover_timeout);
}

void SessionImpl::Resume() {
  // The other process may have read requests before it failed: they come back to us.
  if (absl::Status resent = notifier_->Resend(); !resent.ok()) {
    Log(LogLevel::kWarning, "resuming after a failed handover: %s", resent.ToString());
  }
  if (!transport_->ResumeInPlace()) {
    std::shared_ptr<Transport> paused;
    {
      std::lock_guard lock(serving_mutex_);
      paused = std::move(transport_);
    }
    if (absl::Status started = StartTransport(serving_options_); !started.ok()) {
      Log(LogLevel::kError, "cannot serve again after a failed handover: %s", started.ToString());
    }
  }
  std::lock_guard lock(serving_mutex_);
  pausing_ = false;
  serving_changed_.notify_all();
}

absl::StatusOr<std::unique_ptr<SessionImpl>> SessionImpl::TakeOver(
    int socket, const SessionOptions& options, Handler& handler,
    const RestoreFromHandover& restore) {
  if (absl::Status ready = SendHandoverReady(socket); !ready.ok()) return ready;
  absl::StatusOr<ReceivedHandover> received = ReceiveHandover(socket);
  if (!received.ok()) {
    SendHandoverRefusal(socket, received.status());
    return received.status();
  }
  if (received->fds.empty()) {
    return absl::DataLossError("the handover carried no /dev/fuse fd");
  }
  HandoverRecord& record = received->record;
  std::unique_ptr<SessionImpl> session(
      new SessionImpl(received->fds[0].get(), handler, options.init));
  // Until this session serves, the mount is still the old process's: nothing here unmounts it.
  session->handed_over_ = true;
  session->dispatcher_.set_observer(options.observer);
  session->mount_.emplace(Mount::Adopt(std::move(received->fds[0]), std::move(record.mountpoint),
                                       record.method, record.connection_id));
  if (absl::Status serving =
          session->ServeTakenOver(record, std::move(received->fds), options, restore);
      !serving.ok()) {
    session->mount_->LeaveMounted();
    SendHandoverRefusal(socket, serving);
    return serving;
  }
  session->handed_over_ = false;
  if (absl::Status acked = SendHandoverAck(socket); !acked.ok()) {
    Log(LogLevel::kWarning, "%s", acked.ToString());
  }
  return session;
}

absl::Status SessionImpl::ServeTakenOver(HandoverRecord& record, std::vector<base::UniqueFd> fds,
                                         const SessionOptions& options,
                                         const RestoreFromHandover& restore) {
  dispatcher_.Agree(record.negotiated);
  // Before restore, which may adopt backing ids (BackingFiles::Adopt).
  if (absl::Status checked = CheckInit(options.backing_files); !checked.ok()) return checked;
  const size_t transport_end = 1 + size_t{record.transport_fds};
  if (transport_end > fds.size()) {
    return absl::DataLossError("the handover carried fewer fds than its transport's part names");
  }
  if (!record.transport_bytes.empty()) {
    std::vector<base::UniqueFd> transport_fds;
    for (size_t i = 1; i < transport_end; ++i) transport_fds.push_back(std::move(fds[i]));
    absl::StatusOr<RingsHandover> rings =
        DecodeRingsHandover(record.transport_bytes, std::move(transport_fds));
    if (!rings.ok()) return rings.status();
    adopted_rings_.emplace(std::move(*rings));
  }
  HandoverPayload payload{std::move(record.app_bytes), {}};
  for (size_t i = transport_end; i < fds.size(); ++i) payload.fds.push_back(fds[i].release());
  if (absl::Status restored = restore(std::move(payload)); !restored.ok()) return restored;
  // Before the first read: RESEND also takes what this process has read itself.
  if (absl::Status resent = notifier_->Resend(); !resent.ok()) {
    Log(LogLevel::kWarning, "taking over %s: %s", mount_->mountpoint(), resent.ToString());
  }
  return StartTransport(options);
}

}  // namespace ringfuse::internal
