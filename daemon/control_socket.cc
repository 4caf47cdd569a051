#include "daemon/control_socket.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "transport/errno_status.h"
#include "transport/log.h"

namespace ringfuse::daemon {
namespace {

constexpr size_t kMaxLine = 4096;
constexpr absl::Duration kServerIoTimeout = absl::Seconds(5);

// "\0ringfused/<device>": abstract, so it vanishes with the daemon.
socklen_t AddressFor(dev_t device, sockaddr_un& address) {
  address = {};
  address.sun_family = AF_UNIX;
  const std::string name = absl::StrFormat("ringfused/%u", static_cast<unsigned>(device));
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
}

void SetTimeouts(int fd, absl::Duration timeout) {
  const timeval tv = absl::ToTimeval(timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

// Reads up to the first newline; the line without it, or an error.
absl::StatusOr<std::string> ReadLine(int fd) {
  std::string line;
  char c;
  while (line.size() < kMaxLine) {
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "reading the control socket");
    if (n == 0 || c == '\n') return line;
    line.push_back(c);
  }
  return absl::InvalidArgumentError("control line longer than 4096 bytes");
}

absl::Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "writing the control socket");
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

bool PeerMayControl(int connection) {
  ucred peer{};
  socklen_t size = sizeof(peer);
  if (::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0) return false;
  return peer.uid == 0 || peer.uid == ::geteuid();
}

}  // namespace

absl::StatusOr<dev_t> MountedDevice(const std::string& mountpoint) {
  struct stat at {
  }, parent{};
  if (::stat(mountpoint.c_str(), &at) != 0) return ErrnoStatus(errno, mountpoint);
  const std::string up = mountpoint + "/..";
  if (::stat(up.c_str(), &parent) != 0) return ErrnoStatus(errno, up);
  if (at.st_dev == parent.st_dev && at.st_ino != parent.st_ino) {
    return absl::NotFoundError(absl::StrFormat("nothing is mounted on %s", mountpoint));
  }
  return at.st_dev;
}

absl::StatusOr<std::unique_ptr<ControlServer>> ControlServer::Start(dev_t mount_device,
                                                                    Answer answer) {
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener.valid()) return ErrnoStatus(errno, "control socket");
  sockaddr_un address;
  const socklen_t length = AddressFor(mount_device, address);
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::listen(listener.get(), 8) != 0) {
    return ErrnoStatus(errno, "binding the control socket");
  }
  UniqueFd wake(::eventfd(0, EFD_CLOEXEC));
  if (!wake.valid()) return ErrnoStatus(errno, "eventfd");
  return std::unique_ptr<ControlServer>(
      new ControlServer(std::move(listener), std::move(wake), std::move(answer)));
}

ControlServer::ControlServer(UniqueFd listener, UniqueFd wake, Answer answer)
    : listener_(std::move(listener)), wake_(std::move(wake)), answer_(std::move(answer)) {
  thread_ = std::thread([this] { Serve(); });
}

ControlServer::~ControlServer() {
  const uint64_t one = 1;
  if (::write(wake_.get(), &one, sizeof(one)) < 0) LogLine(LogLevel::kError, "control: wake");
  thread_.join();
}

void ControlServer::Serve() {
  pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
  for (;;) {
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    if (fds[0].revents == 0) continue;
    UniqueFd connection(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (connection.valid()) ServeOne(connection.get());
  }
}

void ControlServer::ServeOne(int connection) {
  SetTimeouts(connection, kServerIoTimeout);
  if (!PeerMayControl(connection)) {
    (void)WriteAll(connection, "error only root and the daemon's user may control it\n");
    return;
  }
  absl::StatusOr<std::string> request = ReadLine(connection);
  const std::string reply =
      request.ok() ? answer_(*request) : absl::StrCat("error ", request.status().message());
  if (absl::Status status = WriteAll(connection, reply + "\n"); !status.ok()) {
    LogLine(LogLevel::kWarning, absl::StrCat("control: ", status.message()));
  }
}

absl::StatusOr<std::string> SendControlRequest(const std::string& mountpoint,
                                               std::string_view request, absl::Duration timeout) {
  absl::StatusOr<dev_t> device = MountedDevice(mountpoint);
  if (!device.ok()) return device.status();
  UniqueFd socket_fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!socket_fd.valid()) return ErrnoStatus(errno, "socket");
  sockaddr_un address;
  const socklen_t length = AddressFor(*device, address);
  if (::connect(socket_fd.get(), reinterpret_cast<sockaddr*>(&address), length) != 0) {
    return ErrnoStatus(errno,
                       absl::StrFormat("no ringfused answers for %s (is it mounted by ringfused "
                                       "with --revisions?)",
                                       mountpoint));
  }
  SetTimeouts(socket_fd.get(), timeout);
  if (absl::Status status = WriteAll(socket_fd.get(), std::string(request) + "\n"); !status.ok()) {
    return status;
  }
  absl::StatusOr<std::string> reply = ReadLine(socket_fd.get());
  if (reply.ok() && reply->empty()) {
    return absl::UnavailableError(
        absl::StrFormat("ringfused for %s closed without answering", mountpoint));
  }
  return reply;
}

}  // namespace ringfuse::daemon
