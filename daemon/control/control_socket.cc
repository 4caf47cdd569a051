#include "daemon/control/control_socket.h"

#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/deadline.h"
#include "base/errno_status.h"
#include "ringfuse/log.h"

namespace ringfuse::daemon {
namespace {

constexpr size_t kMaxLine = 4096;
constexpr absl::Duration kServerRequestBound = absl::Seconds(5);

// Where sockets of a user's daemons live: root's in /run, others' in their runtime directory.
std::vector<std::string> SocketDirectories() {
  std::vector<std::string> directories;
  if (::geteuid() == 0) directories.push_back("/run/ringfused");
  if (const char* runtime = ::getenv("XDG_RUNTIME_DIR"); runtime != nullptr && *runtime == '/') {
    directories.push_back(std::string(runtime) + "/ringfused");
  }
  if (::geteuid() != 0) directories.push_back("/run/ringfused");  // root's, for ringfuse-ctl
  return directories;
}

std::string SocketPath(const std::string& directory, dev_t device) {
  return absl::StrFormat("%s/%u.sock", directory, static_cast<unsigned>(device));
}

// The daemon's own directory: created 0700 if missing; refused unless it is a real directory
// that only this user can write, since whoever can write there can take a socket's name.
absl::Status MakePrivateDirectory(const std::string& directory) {
  if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
    return base::ErrnoStatus(errno, absl::StrFormat("creating %s", directory));
  }
  struct stat st {};
  if (::lstat(directory.c_str(), &st) != 0) return base::ErrnoStatus(errno, directory);
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 022) != 0) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "%s must be a directory of uid %u that no one else can write", directory, ::geteuid()));
  }
  return absl::OkStatus();
}

absl::StatusOr<sockaddr_un> AddressOf(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) {
    return absl::InvalidArgumentError(absl::StrFormat("socket path too long: %s", path));
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  return address;
}

bool PeerIsTrusted(int connection) {
  ucred peer{};
  socklen_t size = sizeof(peer);
  if (::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0) return false;
  return peer.uid == 0 || peer.uid == ::geteuid();
}

// Binds `path`, replacing a socket left by a daemon that died (one nobody answers on).
absl::StatusOr<base::UniqueFd> Listen(const std::string& path) {
  absl::StatusOr<sockaddr_un> address = AddressOf(path);
  if (!address.ok()) return address.status();
  base::UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener.valid()) return base::ErrnoStatus(errno, "control socket");
  const auto* raw = reinterpret_cast<const sockaddr*>(&*address);
  if (::bind(listener.get(), raw, sizeof(*address)) != 0) {
    if (errno != EADDRINUSE) return base::ErrnoStatus(errno, absl::StrFormat("binding %s", path));
    base::UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (::connect(probe.get(), raw, sizeof(*address)) == 0) {
      return absl::AlreadyExistsError(absl::StrFormat("%s is served by another daemon", path));
    }
    ::unlink(path.c_str());
    if (::bind(listener.get(), raw, sizeof(*address)) != 0) {
      return base::ErrnoStatus(errno, absl::StrFormat("binding %s", path));
    }
  }
  if (::listen(listener.get(), 8) != 0)
    return base::ErrnoStatus(errno, absl::StrFormat("listening on %s", path));
  return listener;
}

// Reads up to the first newline, all of it within `deadline`.
absl::StatusOr<std::string> ReadLine(int fd, const base::Deadline& deadline) {
  std::string line;
  char buffer[512];
  for (;;) {
    const int wait_ms = static_cast<int>(std::min<int64_t>(
        std::numeric_limits<int>::max(), absl::ToInt64Milliseconds(deadline.left())));
    pollfd readable{fd, POLLIN, 0};
    const int ready = ::poll(&readable, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return base::ErrnoStatus(errno, "waiting on the control socket");
    if (ready == 0) return absl::DeadlineExceededError("the control socket stayed silent");
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return base::ErrnoStatus(errno, "reading the control socket");
    if (n == 0) return line;
    line.append(buffer, static_cast<size_t>(n));
    if (const size_t end = line.find('\n'); end != std::string::npos) return line.substr(0, end);
    if (line.size() > kMaxLine) {
      return absl::InvalidArgumentError("control line longer than 4096 bytes");
    }
  }
}

absl::Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return base::ErrnoStatus(errno, "writing the control socket");
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

void SetSendTimeout(int fd, absl::Duration timeout) {
  const timeval tv = absl::ToTimeval(timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

}  // namespace

absl::StatusOr<dev_t> MountedDevice(const std::string& mountpoint) {
  struct stat at {
  }, parent{};
  if (::stat(mountpoint.c_str(), &at) != 0) return base::ErrnoStatus(errno, mountpoint);
  const std::string up = mountpoint + "/..";
  if (::stat(up.c_str(), &parent) != 0) return base::ErrnoStatus(errno, up);
  if (at.st_dev == parent.st_dev && at.st_ino != parent.st_ino) {
    return absl::NotFoundError(absl::StrFormat("nothing is mounted on %s", mountpoint));
  }
  return at.st_dev;
}

absl::StatusOr<std::unique_ptr<ControlServer>> ControlServer::Start(dev_t mount_device,
                                                                    Answer answer) {
  const std::string directory = SocketDirectories().front();
  if (absl::Status status = MakePrivateDirectory(directory); !status.ok()) return status;
  const std::string path = SocketPath(directory, mount_device);
  absl::StatusOr<base::UniqueFd> listener = Listen(path);
  if (!listener.ok()) return listener.status();
  base::UniqueFd wake(::eventfd(0, EFD_CLOEXEC));
  if (!wake.valid()) return base::ErrnoStatus(errno, "eventfd");
  return std::unique_ptr<ControlServer>(
      new ControlServer(path, std::move(*listener), std::move(wake), std::move(answer)));
}

absl::StatusOr<std::unique_ptr<ControlServer>> ControlServer::Adopt(base::UniqueFd listener,
                                                                    Answer answer) {
  int listening = 0;
  socklen_t size = sizeof(listening);
  if (::getsockopt(listener.get(), SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) != 0 ||
      listening == 0) {
    return absl::InvalidArgumentError("the control socket handed over is not a listening socket");
  }
  sockaddr_un address{};
  socklen_t length = sizeof(address);
  if (::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
      address.sun_family != AF_UNIX || length <= offsetof(sockaddr_un, sun_path) ||
      address.sun_path[0] != '/') {
    return absl::InvalidArgumentError("the control socket handed over has no unix socket path");
  }
  base::UniqueFd wake(::eventfd(0, EFD_CLOEXEC));
  if (!wake.valid()) return base::ErrnoStatus(errno, "eventfd");
  return std::unique_ptr<ControlServer>(
      new ControlServer(address.sun_path, std::move(listener), std::move(wake), std::move(answer)));
}

ControlServer::ControlServer(std::string path, base::UniqueFd listener, base::UniqueFd wake,
                             Answer answer)
    : path_(std::move(path)),
      listener_(std::move(listener)),
      wake_(std::move(wake)),
      answer_(std::move(answer)) {
  thread_ = std::thread([this] { Serve(); });
}

ControlServer::~ControlServer() {
  const uint64_t one = 1;
  if (::write(wake_.get(), &one, sizeof(one)) < 0) LogLine(LogLevel::kError, "control: wake");
  thread_.join();
  if (!handed_off_) ::unlink(path_.c_str());
}

namespace {

constexpr int kResourceRetryMs = 200;

bool OutOfResources(int error) {
  return error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM;
}

}  // namespace

void ControlServer::Serve() {
  pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
  bool starved = false;  // accept has failed for want of fds since the last connection
  for (;;) {
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    if (fds[0].revents == 0) continue;
    base::UniqueFd connection(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (connection.valid()) {
      starved = false;
      ServeOne(connection.get());
      if (handed_off_) return;
    } else if (OutOfResources(errno)) {
      // The connection stays queued and the listener readable: without a pause this loop
      // would spin a CPU until an fd comes free. Stopping still wakes it at once.
      if (!std::exchange(starved, true)) {
        LogLine(LogLevel::kWarning,
                absl::StrFormat("control: accept: %s; retrying", std::strerror(errno)));
      }
      pollfd wake{wake_.get(), POLLIN, 0};
      if (::poll(&wake, 1, kResourceRetryMs) > 0) return;
    }
  }
}

// One request at a time, each bounded, so a silent client holds the channel for 5 s at most.
void ControlServer::ServeOne(int connection) {
  SetSendTimeout(connection, kServerRequestBound);
  if (!PeerIsTrusted(connection)) {
    (void)WriteAll(connection, "error only root and the daemon's user may control it\n");
    return;
  }
  absl::StatusOr<std::string> request = ReadLine(connection, base::Deadline(kServerRequestBound));
  const std::string reply =
      request.ok() ? answer_(*request, *this) : "error " + std::string(request.status().message());
  if (absl::Status status = WriteAll(connection, reply + "\n"); !status.ok()) {
    LogLine(LogLevel::kWarning, "control: " + std::string(status.message()));
  }
}

absl::StatusOr<std::string> SendControlRequest(const std::string& mountpoint,
                                               std::string_view request, absl::Duration timeout) {
  absl::StatusOr<dev_t> device = MountedDevice(mountpoint);
  if (!device.ok()) return device.status();
  absl::StatusOr<std::string> reply = SendControlRequestTo(*device, request, timeout);
  if (absl::IsNotFound(reply.status())) {
    return absl::NotFoundError(
        absl::StrFormat("no ringfused answers for %s (is it mounted by ringfused?)", mountpoint));
  }
  return reply;
}

absl::StatusOr<std::string> SendControlRequestTo(dev_t device, std::string_view request,
                                                 absl::Duration timeout) {
  const base::Deadline deadline(timeout);
  for (const std::string& directory : SocketDirectories()) {
    const std::string path = SocketPath(directory, device);
    absl::StatusOr<sockaddr_un> address = AddressOf(path);
    if (!address.ok()) continue;
    base::UniqueFd socket_fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!socket_fd.valid()) return base::ErrnoStatus(errno, "socket");
    SetSendTimeout(socket_fd.get(), timeout);  // before connect: it bounds a full backlog too
    if (::connect(socket_fd.get(), reinterpret_cast<const sockaddr*>(&*address),
                  sizeof(*address)) != 0) {
      continue;
    }
    if (!PeerIsTrusted(socket_fd.get())) {
      return absl::PermissionDeniedError(
          absl::StrFormat("%s is not served by root or by you; not trusting it", path));
    }
    if (absl::Status status = WriteAll(socket_fd.get(), std::string(request) + "\n");
        !status.ok()) {
      return status;
    }
    absl::StatusOr<std::string> reply = ReadLine(socket_fd.get(), deadline);
    if (reply.ok() && reply->empty()) {
      return absl::UnavailableError(absl::StrFormat("%s closed without answering", path));
    }
    return reply;
  }
  return absl::NotFoundError(
      absl::StrFormat("no control socket for device %u", static_cast<unsigned>(device)));
}

}  // namespace ringfuse::daemon
