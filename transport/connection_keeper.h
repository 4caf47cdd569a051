// The keeper's half of a kept session (ringfuse/keeper.h): it holds the connection a daemon
// deposited, and the note it left, and gives both to the next daemon it serves after a crash.
// How daemons are started and restarted is the caller's (ringfuse-ctl supervise).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "transport/handover_record.h"

namespace ringfuse::internal {

class ConnectionKeeper {
 public:
  // Answers the next message of the daemon at the other end of `socket`. NotFound once that
  // daemon closed its end (it exited or died); any other error for a daemon that broke the
  // protocol (the caller should stop listening to it; what was kept stays kept).
  absl::Status ServeOne(int socket);

  bool holds_connection() const { return connection_.has_value(); }
  // The kept /dev/fuse fd, -1 if none.
  int dev_fd() const;
  const std::string& mountpoint() const;
  // The kernel still serves the kept connection: not unmounted, not aborted.
  bool connection_alive() const;
  // How many daemons got the connection back.
  uint32_t recoveries() const { return handed_out_; }
  // The daemon of the socket last served has deposited the connection or serves it again: it
  // handles its signals by now (a stop then unmounts).
  bool daemon_serves() const { return daemon_serves_; }
  // A new daemon is started: it serves once it says so.
  void NewDaemon() { daemon_serves_ = false; }

 private:
  absl::Status Answer(int socket);
  absl::Status Take(int socket);

  // The record; fds[0] the /dev/fuse fd, the rest the application's.
  std::optional<ReceivedHandover> connection_;
  std::string note_;
  uint32_t handed_out_ = 0;
  bool daemon_serves_ = false;
};

}  // namespace ringfuse::internal
