// The control channel between a running ringfused and ringfuse-ctl: an abstract unix socket
// named after the mount's device number, so that the mountpoint alone finds its daemon and no
// socket file is left behind. One request line and one reply line per connection; only root
// and the daemon's own user may connect.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "transport/fd.h"

namespace ringfuse::daemon {

// The device number of the filesystem mounted at `mountpoint`; an error if nothing is mounted
// there.
absl::StatusOr<dev_t> MountedDevice(const std::string& mountpoint);

class ControlServer {
 public:
  // Answers one request line (without its newline) with one reply line.
  using Answer = std::function<std::string(std::string_view request)>;

  static absl::StatusOr<std::unique_ptr<ControlServer>> Start(dev_t mount_device, Answer answer);
  // Stops accepting and joins; a request being answered is finished first.
  ~ControlServer();

 private:
  ControlServer(UniqueFd listener, UniqueFd wake, Answer answer);
  void Serve();
  void ServeOne(int connection);

  UniqueFd listener_;
  UniqueFd wake_;  // an eventfd that ends Serve()
  Answer answer_;
  std::thread thread_;
};

// Sends `request` to the daemon serving `mountpoint` and returns its reply line.
absl::StatusOr<std::string> SendControlRequest(const std::string& mountpoint,
                                               std::string_view request, absl::Duration timeout);

}  // namespace ringfuse::daemon
