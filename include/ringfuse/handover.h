/// \file
/// Handing a live connection to another process, so that a daemon restarts or upgrades without
/// unmounting and without a client call failing.
///
/// The old process calls Session::HandOver with one end of a unix socket (SOCK_SEQPACKET or
/// SOCK_STREAM) and a callback that saves the application's state; the new process calls
/// Session::TakeOver with the other end and a callback that restores it. Between the two, the
/// kernel holds the requests clients make (they wait, nothing fails):
///
/// 0. The new process says it is ready to take over; the old one waits for that before it
///    pauses, so that clients do not wait while the new process starts.
/// 1. The old session stops reading at a clean point: each worker finishes the request in its
///    hands (a uring session's rings first take back the reads they hold, and answer any that
///    had already brought a request). A request a handler answers later, from another thread,
///    is not waited for: the new process gets it again through NOTIFY_RESEND, and the late
///    answer is refused.
/// 2. `save` runs with no request in progress, and what it returns travels with the connection's
///    /dev/fuse fd, what INIT agreed, and the mount's identity.
/// 3. The new process runs `restore`, asks the kernel to send again whatever the old process
///    read and did not answer (NOTIFY_RESEND), starts its transport, and acknowledges (or, if
///    `restore` fails, tells the old process so).
/// 4. On the acknowledgement the old session is over (Wait returns; the mount stays); without
///    one (the new process died or refused), the old session resumes serving, so a takeover
///    that fails halfway never leaves the mount without a server.
///
/// Transports: the threads and uring transports hand over, to a session on either. A uring-cmd
/// session hands over to a session on uring-cmd only, its ring entries and the requests they
/// hold with it (on 6.18 the kernel does not resend requests held by FUSE-over-io_uring ring
/// entries, so they travel instead); a session on another transport refuses it, and the old one
/// serves on. A session whose rings or queues cannot all stop within
/// HandoverOptions::pause_timeout refuses too (DeadlineExceeded), serving on. See
/// docs/handover.md for what survives and what is lost.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ringfuse/export.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// The application's part of a handover: bytes in any format it chooses, and the file
/// descriptors they refer to (for example by index). The fds go over SCM_RIGHTS, so the new
/// process gets the same open files (offsets, flags, OFD and flock locks included).
struct HandoverPayload {
  std::string bytes;  ///< the application's serialized state
  /// Sent by HandOver, which leaves them open (they stay the caller's). In TakeOver's restore,
  /// the received fds, which the callback then owns.
  std::vector<int> fds;
};

/// How long HandOver waits.
struct HandoverOptions {
  /// For the new process to get ready, and again to restore its state and start serving; past
  /// either the session serves on (having paused nothing in the first case).
  absl::Duration takeover_timeout = absl::Seconds(60);
  /// For the uring transport to stop reading at a clean point (every ring's read taken back,
  /// every request in hand answered); past it the session serves on. The threads transport
  /// waits for its workers' requests in hand however long they take.
  absl::Duration pause_timeout = absl::Seconds(2);
};

/// What one handover took, measured by the old process.
struct HandoverReport {
  /// From when the old process stopped reading requests to when the new one serves: the
  /// longest a client call waited because of the handover.
  absl::Duration pause;
  absl::Duration save;     ///< spent in the save callback
  size_t state_bytes = 0;  ///< of the application's payload
  size_t state_fds = 0;    ///< of the application's payload
};

/// Saves the application's state, called with no request in progress. An error cancels the
/// handover (the session serves on) and is returned by HandOver.
using SaveForHandover = std::function<absl::StatusOr<HandoverPayload>()>;
/// Restores it in the new process before any request is served. An error cancels the takeover:
/// TakeOver returns it and the old process serves on.
using RestoreFromHandover = std::function<absl::Status(HandoverPayload payload)>;

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
