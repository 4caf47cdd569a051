/// \file
/// A kept session: the connection outlives a crash of the daemon (kill -9, abort, a segfault).
///
/// A keeper, a small process of its own (`ringfuse-ctl supervise` is one), starts the daemon
/// with one end of a unix socket (SOCK_SEQPACKET) and holds, from INIT on, a copy of the
/// connection's /dev/fuse fd. While the daemon runs, the keeper only waits. When the daemon
/// dies, the kernel keeps the connection (the keeper's fd holds it open) and holds the requests
/// clients make; the keeper starts the daemon again, and its Session::StartKept gets the
/// connection back instead of mounting:
///
/// 1. What INIT agreed and the mount's identity come with the fd; the application's
///    RecoverAfterCrash runs with what it left in the keeper's note (Session::UpdateKeptNote).
/// 2. The kernel still refers to the dead process's node ids and fh values (cached names, open
///    files), which this process did not see: unless the application says it rebuilt them,
///    every cached name is marked stale with one NOTIFY_INC_EPOCH, so the next path walk looks
///    each name up again (and the kernel's own retry on ESTALE covers a walk already under way).
/// 3. NOTIFY_RESEND brings back every request the dead process had read and not answered, and
///    the transport starts.
///
/// What survives a crash, and what does not (docs/crash-recovery.md has the table):
/// - The mount, every path, and every call a client makes by path: clients only wait.
/// - Requests in flight are executed again. One that the dead process had already executed is
///   executed twice: a CREATE with O_EXCL or a MKDIR then fails with EEXIST, an UNLINK with
///   ENOENT. (A handover, by contrast, executes nothing twice.)
/// - Files and directories open before the crash: what the application did not rebuild fails
///   cleanly, and closing them works (ringfused reopens open files from a journal it keeps with
///   the keeper; open directories answer EBADF).
/// - Locks held through the dead process's files are released by its death.
///
/// What the kernel still refers to can be rebuilt: the keeper holds, beside the connection, fds
/// the application gives it (StartKept's `kept_fds`) and hands them to each process after a
/// crash (CrashRecovery::fds). ringfused keeps its journals (its open files, its nodes, its
/// changes) in such memfds, and knows each by its memfd's name rather than by its place.
///
/// Transports: threads and uring (their workers read the connection's fd itself, not clones, so
/// that nothing the kernel delivered dies with the process). uring-cmd cannot be kept: its ring
/// entries belong to the dead process's io_uring. `auto` picks uring in a kept session.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ringfuse/export.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// What the process that recovers a connection after a crash is told.
struct CrashRecovery {
  /// How many processes served the connection before this one: 1 after the first crash. Node
  /// ids and fh values the earlier ones gave the kernel are still in use there; give out new
  /// ones from a range of this incarnation's own (ringfused starts both at incarnation << 40).
  uint32_t incarnation = 0;
  /// What the application last left with the keeper (Session::UpdateKeptNote), "" if nothing.
  std::string note;
  /// This process's copies of the fds the first process gave the keeper (StartKept's
  /// `kept_fds`, a memfd the application keeps state in, say), in that order; the callback owns
  /// them. The keeper keeps its own copies for the next crash.
  std::vector<int> fds;
};

/// The application's answer.
struct Recovered {
  /// The application knows every node id the kernel may still use (it kept its table where a
  /// crash cannot reach it): cached names stay valid. False (the default): every cached name
  /// is marked stale before the first request is served.
  bool names_still_valid = false;
};

/// Runs in the new process before any request is served. An error ends the session (the keeper
/// decides whether to start the daemon again).
using RecoverAfterCrash = std::function<absl::StatusOr<Recovered>(const CrashRecovery&)>;

/// The keeper's half of a kept session: it holds the connection a daemon deposited, and the note
/// it left, and gives both to the next daemon it serves after a crash. How daemons are started
/// and restarted is the caller's (`ringfuse-ctl supervise` is one such caller).
class ConnectionKeeper {
 public:
  ConnectionKeeper();
  ~ConnectionKeeper();
  ConnectionKeeper(const ConnectionKeeper&) = delete;
  ConnectionKeeper& operator=(const ConnectionKeeper&) = delete;

  /// Answers the next message of the daemon at the other end of `socket`. NotFound once that
  /// daemon closed its end (it exited or died); any other error for a daemon that broke the
  /// protocol (the caller should stop listening to it; what was kept stays kept).
  absl::Status ServeOne(int socket);

  /// Whether a daemon deposited its connection here.
  bool holds_connection() const;
  /// The kept /dev/fuse fd, -1 if none.
  int dev_fd() const;
  /// Where the kept connection is mounted; "" if none.
  const std::string& mountpoint() const;
  /// The kernel still serves the kept connection: not unmounted, not aborted.
  bool connection_alive() const;
  /// How many daemons got the connection back.
  uint32_t recoveries() const;
  /// The daemon of the socket last served has deposited the connection or serves it again: it
  /// handles its signals by now (a stop then unmounts).
  bool daemon_serves() const;
  /// A new daemon is started: it serves once it says so.
  void NewDaemon();

 private:
  struct Kept;  // the connection's record and fds, the note, the counts
  std::unique_ptr<Kept> kept_;
};

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
