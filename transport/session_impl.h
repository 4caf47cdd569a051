// The session's internals behind ringfuse/session.h: the mount, the dispatcher, the transport
// and the notifier, and the order they start and stop in.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "base/fd.h"
#include "protocol/dispatcher.h"
#include "ringfuse/handover.h"
#include "ringfuse/session.h"
#include "transport/backing_connection.h"
#include "transport/dev_fuse_channel.h"
#include "transport/handover_record.h"
#include "transport/log.h"
#include "transport/mount.h"
#include "transport/transport.h"
#include "transport/uring_cmd_handover.h"

namespace ringfuse::internal {

struct KeeperKept;  // keeper_protocol.h

class SessionImpl {
 public:
  // Mounts, answers INIT, picks and starts the transport. `handler` must outlive the session.
  // With options.mount.sync_init, INIT is answered while mount() waits for it, so a refused INIT
  // fails the mount and nothing is left mounted.
  static absl::StatusOr<std::unique_ptr<SessionImpl>> Start(const SessionOptions& options,
                                                            Handler& handler);
  // Serves a connection another process hands over through `socket` (session_handover.cc).
  static absl::StatusOr<std::unique_ptr<SessionImpl>> TakeOver(int socket,
                                                               const SessionOptions& options,
                                                               Handler& handler,
                                                               const RestoreFromHandover& restore);
  // Serves a kept connection: mounts and deposits it, or recovers it (session_keeper.cc).
  static absl::StatusOr<std::unique_ptr<SessionImpl>> StartKept(base::UniqueFd keeper,
                                                                const SessionOptions& options,
                                                                Handler& handler,
                                                                const RecoverAfterCrash& recover,
                                                                const std::vector<int>& kept_fds);
  // Stops (if still running) and joins.
  ~SessionImpl();

  // Hands the connection to the process at the other end of `socket` (session_handover.cc).
  absl::StatusOr<HandoverReport> HandOver(int socket, const SaveForHandover& save,
                                          const HandoverOptions& options);

  // Blocks until the connection ends: unmounted by anyone, aborted, or Stop(). Joins every
  // transport thread. Any number of threads may wait at once.
  void Wait();
  // Ends the session: lazy unmount, then abort of the connection through fusectl so that no
  // client can keep it alive. Returns at once; Wait() then returns promptly. Any thread.
  void Stop();
  // After Wait: the connection ended while still mounted and not by Stop(), that is the kernel
  // aborted it (a request unanswered past the request timeout, or an abort through fusectl).
  bool aborted() const { return aborted_.load(); }

  TransportKind transport_kind() const { return kind_; }
  // Which transport serves, why it was chosen, and what it costs; also logged at info level.
  const std::string& transport_choice() const { return transport_choice_; }
  const Negotiated& negotiated() const { return dispatcher_.negotiated(); }
  const Mount& mount() const { return *mount_; }
  int dev_fd() const { return mount_->dev_fd(); }
  // Sends notifications on this connection; see notifier.h for which way to use where.
  Notifier& notifier() { return *notifier_; }
  absl::Status UpdateKeptNote(std::string_view note);
  uint32_t incarnation() const { return incarnation_; }

 private:
  // The mount comes once mounted: with sync_init, INIT is answered before.
  SessionImpl(int dev_fd, Handler& handler, const InitWishes& wishes);

  // Mounts and answers INIT: all but the transport.
  static absl::StatusOr<std::unique_ptr<SessionImpl>> MountAndInit(const SessionOptions& options,
                                                                   Handler& handler);
  // Mounts, creating the session once the /dev/fuse fd exists; with sync_init, answers INIT on a
  // thread while mount() waits for it.
  static absl::StatusOr<std::unique_ptr<SessionImpl>> MountWithSession(
      const SessionOptions& options, Handler& handler);
  absl::Status ServeInit(const SessionOptions& options);
  // Once INIT is agreed: the notifier, and the backing files bound to the connection.
  absl::Status CheckInit(BackingFiles* backing_files);
  absl::Status StartTransport(const SessionOptions& options);
  // After a handover that failed once reading had stopped: whatever the other process read is
  // sent again, and a new transport serves.
  void Resume();
  // The taking-over half after the record arrived: restore, notifier, RESEND, transport.
  // `fds[0]` is already the mount's; the rest are the application's.
  absl::Status ServeTakenOver(HandoverRecord& record, std::vector<base::UniqueFd> fds,
                              const SessionOptions& options, const RestoreFromHandover& restore);
  // StartKept's two halves: a keeper that holds no connection yet (mount, INIT, deposit the
  // connection and `kept_fds` with the keeper, serve), and one that kept a dead daemon's (take
  // it back, recover, serve).
  static absl::StatusOr<std::unique_ptr<SessionImpl>> StartKeptFresh(
      base::UniqueFd keeper, const SessionOptions& options, Handler& handler,
      const std::vector<int>& kept_fds);
  static absl::StatusOr<std::unique_ptr<SessionImpl>> StartRecovered(
      base::UniqueFd keeper, const KeeperKept& kept, const SessionOptions& options,
      Handler& handler, const RecoverAfterCrash& recover);
  // A recovered connection's half after the keeper sent it: recover, stale names, RESEND,
  // transport.
  absl::Status ServeRecovered(HandoverRecord& record, const CrashRecovery& crash,
                              const SessionOptions& options, const RecoverAfterCrash& recover);
  // A kept session needs NOTIFY_RESEND.
  absl::Status CheckKernelResends() const;
  // Gives the keeper a copy of the connection, and `kept_fds`, once INIT is agreed.
  absl::Status DepositWithKeeper(const std::vector<int>& kept_fds);
  // Pauses, saves, sends and waits for the other process to serve.
  absl::Status SendConnection(int socket, const SaveForHandover& save,
                              const HandoverOptions& options, HandoverReport& report);

  std::optional<Mount> mount_;  // set once mounted
  DevFuseReplyChannel init_channel_;
  LoggingDiagnostics diagnostics_;
  Dispatcher dispatcher_;
  std::unique_ptr<Notifier> notifier_;  // created once INIT has told us the kernel's version
  // Replaced when a failed handover resumes and dropped once one succeeded: shared with Wait(),
  // which may be joining it meanwhile. Guarded by serving_mutex_.
  std::shared_ptr<Transport> transport_;
  std::mutex serving_mutex_;
  std::condition_variable serving_changed_;
  bool pausing_ = false;      // a handover is under way
  bool handed_over_ = false;  // the connection is another process's: never unmount it
  TransportKind kind_ = TransportKind::kAuto;
  SessionOptions serving_options_;              // what StartTransport was given, for Resume
  std::shared_ptr<BackingConnection> backing_;  // unbound before the /dev/fuse fd closes
  std::string transport_choice_;
  // The ring entries a taken-over connection came with, until StartTransport gives them to the
  // uring-cmd transport.
  std::optional<RingsHandover> adopted_rings_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> aborted_{false};
  std::once_flag stop_once_;
  std::once_flag join_once_;
  base::UniqueFd keeper_;  // a kept session's socket to its keeper
  std::mutex keeper_mutex_;
  uint32_t incarnation_ = 0;
};

}  // namespace ringfuse::internal
