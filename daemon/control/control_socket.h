// The control channel between a running ringfused and ringfuse-ctl: a unix socket named after
// the mount's device number, so that the mountpoint alone finds its daemon. It lives in a
// directory only its owner can write (/run/ringfused for root, $XDG_RUNTIME_DIR/ringfused for
// other users), so nobody else can take its name first; each side checks the other's
// credentials (root, or the same user). One request line and one reply line per connection,
// each within a time bound.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/fd.h"

namespace ringfuse::daemon {

// The device number of the filesystem mounted at `mountpoint`; an error if nothing is mounted
// there.
absl::StatusOr<dev_t> MountedDevice(const std::string& mountpoint);

class ControlServer {
 public:
  // Answers one request line (without its newline) with one reply line. `server` is the one
  // answering, so that an answer may hand its listener over (HandOff).
  using Answer = std::function<std::string(std::string_view request, ControlServer& server)>;

  static absl::StatusOr<std::unique_ptr<ControlServer>> Start(dev_t mount_device, Answer answer);
  // Serves `listener`, the listening socket of a daemon that handed its mount over to this one
  // (ringfuse-ctl restart): the same socket under the same name, so clients see no gap.
  static absl::StatusOr<std::unique_ptr<ControlServer>> Adopt(base::UniqueFd listener,
                                                              Answer answer);
  // Stops accepting, joins (a request being answered is finished first) and removes the socket,
  // unless handed off.
  ~ControlServer();

  const std::string& path() const { return path_; }
  // The listening socket, for a successor to Adopt.
  int listener() const { return listener_.get(); }
  // From an answer only: once this request is answered, accepts no more and leaves the socket's
  // name at destruction, since the successor that got the listener serves it now.
  void HandOff() { handed_off_ = true; }

 private:
  ControlServer(std::string path, base::UniqueFd listener, base::UniqueFd wake, Answer answer);
  void Serve();
  void ServeOne(int connection);

  std::string path_;
  base::UniqueFd listener_;
  base::UniqueFd wake_;  // an eventfd that ends Serve()
  Answer answer_;
  // Written by the serving thread only, read by the destructor once it has joined.
  bool handed_off_ = false;
  std::thread thread_;
};

// Sends `request` to the daemon serving `mountpoint` and returns its reply line.
absl::StatusOr<std::string> SendControlRequest(const std::string& mountpoint,
                                               std::string_view request, absl::Duration timeout);
// The same, to the daemon of the mount whose device number is `mount_device`.
absl::StatusOr<std::string> SendControlRequestTo(dev_t mount_device, std::string_view request,
                                                 absl::Duration timeout);

}  // namespace ringfuse::daemon
