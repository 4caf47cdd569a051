// The session's internals behind ringfuse/session.h: the mount, the dispatcher, the transport
// and the notifier, and the order they start and stop in.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

#include "protocol/dispatcher.h"
#include "ringfuse/session.h"
#include "transport/backing_connection.h"
#include "transport/dev_fuse_channel.h"
#include "transport/log.h"
#include "transport/mount.h"
#include "transport/transport.h"

namespace ringfuse::internal {

class SessionImpl {
 public:
  // Mounts, answers INIT, picks and starts the transport. `handler` must outlive the session.
  // With options.mount.sync_init, INIT is answered while mount() waits for it, so a refused INIT
  // fails the mount and nothing is left mounted.
  static absl::StatusOr<std::unique_ptr<SessionImpl>> Start(const SessionOptions& options,
                                                            Handler& handler);
  // Stops (if still running) and joins.
  ~SessionImpl();

  // Blocks until the connection ends: unmounted by anyone, aborted, or Stop(). Joins every
  // transport thread. Any number of threads may wait at once.
  void Wait();
  // Ends the session: lazy unmount, then abort of the connection through fusectl so that no
  // client can keep it alive. Returns at once; Wait() then returns promptly. Any thread.
  void Stop();
  // After Wait: the connection ended while still mounted and not by Stop(), that is the kernel
  // aborted it (a request unanswered past the request timeout, or an abort through fusectl).
  bool aborted() const { return aborted_.load(); }

  TransportKind transport_kind() const { return transport_->kind(); }
  // Which transport serves, why it was chosen, and what it costs; also logged at info level.
  const std::string& transport_choice() const { return transport_choice_; }
  const Negotiated& negotiated() const { return dispatcher_.negotiated(); }
  const Mount& mount() const { return *mount_; }
  int dev_fd() const { return mount_->dev_fd(); }
  // Sends notifications on this connection; see notifier.h for which way to use where.
  Notifier& notifier() { return *notifier_; }

 private:
  // The mount comes once mounted: with sync_init, INIT is answered before.
  SessionImpl(int dev_fd, Handler& handler, const InitWishes& wishes);

  // Mounts, creating the session once the /dev/fuse fd exists; with sync_init, answers INIT on a
  // thread while mount() waits for it.
  static absl::StatusOr<std::unique_ptr<SessionImpl>> MountWithSession(
      const SessionOptions& options, Handler& handler);
  absl::Status ServeInit(const SessionOptions& options);
  // Once INIT is agreed: the notifier, and the backing files bound to the connection.
  absl::Status CheckInit(BackingFiles* backing_files);
  absl::Status StartTransport(const SessionOptions& options);

  std::optional<Mount> mount_;  // set once mounted
  DevFuseReplyChannel init_channel_;
  LoggingDiagnostics diagnostics_;
  Dispatcher dispatcher_;
  std::unique_ptr<Notifier> notifier_;  // created once INIT has told us the kernel's version
  std::unique_ptr<Transport> transport_;
  std::shared_ptr<BackingConnection> backing_;  // unbound before the /dev/fuse fd closes
  std::string transport_choice_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> aborted_{false};
  std::once_flag stop_once_;
  std::once_flag join_once_;
};

}  // namespace ringfuse::internal
