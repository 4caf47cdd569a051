/// \file
/// A Session is one mounted FUSE filesystem being served: it owns the mount, the dispatcher, the
/// transport and the notifier; it answers INIT, serves until the connection ends, and joins every
/// thread it started.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ringfuse/backing.h"
#include "ringfuse/export.h"
#include "ringfuse/handler.h"
#include "ringfuse/handover.h"
#include "ringfuse/init.h"
#include "ringfuse/keeper.h"
#include "ringfuse/mount_options.h"
#include "ringfuse/notifier.h"
#include "ringfuse/observer.h"
#include "ringfuse/transport_options.h"

// Declared outside the public region: the internals keep hidden visibility.
namespace ringfuse::internal {
class SessionImpl;
}  // namespace ringfuse::internal

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// Everything Session::Start needs besides the handler.
struct SessionOptions {
  MountOptions mount;                              ///< what to mount and how
  TransportKind transport = TransportKind::kAuto;  ///< which transport serves
  TransportOptions transport_options;              ///< and how it runs
  InitWishes init;                                 ///< what to ask for at INIT
  /// For the kernel's INIT after mount(); with mount.sync_init, mount() itself waits for INIT.
  absl::Duration init_timeout = absl::Seconds(10);
  /// Sees every request and reply from INIT on (a tracer, -d); must outlive the session.
  RequestObserver* observer = nullptr;
  /// Bound to this session's connection from INIT to the session's end, for kernel passthrough
  /// (see backing.h); must outlive the session, and serves one session at a time.
  BackingFiles* backing_files = nullptr;
};

/// One mounted FUSE filesystem being served (see the file's description).
class Session {
 public:
  /// Mounts, answers INIT, picks and starts the transport. `handler` must outlive the session.
  /// With options.mount.sync_init, INIT is answered while mount() waits for it, so a refused INIT
  /// fails the mount and nothing is left mounted.
  static absl::StatusOr<std::unique_ptr<Session>> Start(const SessionOptions& options,
                                                        Handler& handler);
  /// Serves a connection that another process hands over through `socket` (its Session::HandOver;
  /// see handover.h) instead of mounting: options.mount and options.init are not used, since the
  /// mount and what INIT agreed come with the connection (the handler's Init is told them). Runs
  /// `restore` before serving (options.backing_files is bound by then, for
  /// BackingFiles::Adopt), then asks the kernel to resend what the other process left
  /// unanswered, starts the transport and tells the other process. Until then nothing this
  /// session does unmounts: a failed takeover leaves the mount to the other process.
  static absl::StatusOr<std::unique_ptr<Session>> TakeOver(int socket,
                                                           const SessionOptions& options,
                                                           Handler& handler,
                                                           const RestoreFromHandover& restore);
  /// Serves a kept connection, one that outlives a crash of this process (see keeper.h). Asks
  /// the keeper at the other end of `keeper_socket` (the session owns it from then on) whether
  /// it holds a connection. If not, mounts as Start does and deposits the connection with the
  /// keeper once INIT is agreed. If so, recovers it instead of mounting: `recover` runs, the
  /// kernel's cached names are marked stale unless it says they stay valid, what the dead
  /// process had read is resent, and the transport starts. options.transport must not be
  /// kUringCmd, kAuto means kUring, and every worker reads the connection's own fd
  /// (TransportOptions::clone_fds is taken as false). `kept_fds` (at most 16) go to the keeper
  /// with the connection, when this process mounts, and come back in CrashRecovery::fds; they
  /// stay the caller's.
  static absl::StatusOr<std::unique_ptr<Session>> StartKept(int keeper_socket,
                                                            const SessionOptions& options,
                                                            Handler& handler,
                                                            const RecoverAfterCrash& recover,
                                                            const std::vector<int>& kept_fds = {});
  /// Stops (if still running) and joins.
  ~Session();

  /// Hands this session's live connection to the process at the other end of `socket` (see
  /// handover.h). On success the session is over: Wait() returns, Stop() and the destructor
  /// leave the mount in place; destroy the session soon, since until then it keeps the
  /// connection's /dev/fuse file open. On failure the session serves on. Any thread but a
  /// handler's; one handover at a time. Every transport hands over (uring-cmd to uring-cmd
  /// only); not a fusermount3 mount with auto_unmount (its helper's socket does not travel
  /// yet), nor a kept session (StartKept: its keeper would hold the connection twice).
  absl::StatusOr<HandoverReport> HandOver(int socket, const SaveForHandover& save,
                                          const HandoverOptions& options = {});
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Blocks until the connection ends: unmounted by anyone, aborted, or Stop(). Joins every
  /// transport thread. Any number of threads may wait at once.
  void Wait();
  /// Ends the session: lazy unmount, then abort of the connection through fusectl so that no
  /// client can keep it alive. Returns at once; Wait() then returns promptly. Any thread.
  void Stop();
  /// After Wait: the connection ended while still mounted and not by Stop(), that is the kernel
  /// aborted it (a request unanswered past the request timeout, or an abort through fusectl).
  bool aborted() const;

  /// The transport that serves (never kAuto).
  TransportKind transport_kind() const;
  /// Which transport serves, why it was chosen, and what it costs; also logged at info level.
  const std::string& transport_choice() const;
  /// What INIT agreed with the kernel.
  const Negotiated& negotiated() const;
  /// The absolute, symlink-free path mounted on.
  const std::string& mountpoint() const;
  /// The connection's id under /sys/fs/fuse/connections.
  uint32_t connection_id() const;
  /// The connection's /dev/fuse fd, owned by the session.
  int dev_fd() const;
  /// Sends notifications on this connection; see notifier.h for which way to use where.
  Notifier& notifier();
  /// A kept session's: replaces what the keeper tells the next process after a crash
  /// (CrashRecovery::note), at most 64 KiB. FailedPrecondition for a session that is not kept.
  /// Any thread.
  absl::Status UpdateKeptNote(std::string_view note);
  /// A kept session's CrashRecovery::incarnation: 0 in the process that mounted.
  uint32_t incarnation() const;

 private:
  explicit Session(std::unique_ptr<internal::SessionImpl> impl);

  std::unique_ptr<internal::SessionImpl> impl_;
};

/// Ends connection `connection_id` (see Session::connection_id) by writing to
/// `/sys/fs/fuse/connections/<id>/abort`, mounting fusectl there first if needed. Needs root.
absl::Status AbortConnection(uint32_t connection_id);

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
