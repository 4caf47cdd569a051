// For the fuzz targets over what a process receives on a unix socket, fds attached
// (handover_record_fuzzer.cc, keeper_protocol_fuzzer.cc): the socket pair, fuzzed messages sent
// on it, and whether the receiver closed the fds it did not keep.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd.h"
#include "ringfuse/bytes.h"
#include "tests/fuzz/fuzz_checks.h"

namespace ringfuse::fuzz {

// How many of this process's fds lead to a file whose path (as /proc/self/fd shows it) starts
// with `prefix`: the fuzzer's own fds and libFuzzer's (its symbolizer's pipes) are not counted.
inline size_t OpenFdsTo(std::string_view prefix) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) std::abort();
  size_t count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    char target[PATH_MAX];
    const std::string link = std::string("/proc/self/fd/") + entry->d_name;
    const ssize_t length = ::readlink(link.c_str(), target, sizeof(target));
    count += length > 0 && std::string_view(target, length).starts_with(prefix);
  }
  ::closedir(dir);
  return count;
}

// The file whose fds the fuzzers hand over: a memfd of its own, so that the fds the code under
// test still holds are told from all others. Its own fd stays open.
inline constexpr std::string_view kHandedFile = "/memfd:ringfuse-fuzz-handed";
inline int HandedFile() {
  static const int fd = ::memfd_create("ringfuse-fuzz-handed", MFD_CLOEXEC);
  if (fd < 0) std::abort();
  return fd;
}
// Whether no fd of the handed file is open but HandedFile's own.
inline bool HandedFdsClosed() {
  HandedFile();  // made, if no input used it yet
  return OpenFdsTo(kHandedFile) == 1;
}

// The two ends of a SOCK_SEQPACKET pair: the fuzzer's, and the one the code under test reads.
struct SocketPair {
  SocketPair() {
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) std::abort();
    fuzzer.reset(ends[0]);
    tested.reset(ends[1]);
  }
  base::UniqueFd fuzzer, tested;
};

// Sends one message of `bytes` with `fds` fds of the handed file attached; false if the socket's
// buffer is full (the rest of an input is then not sent: the receiver never blocks on it).
inline bool SendMessage(int socket, ConstBytes bytes, int fds) {
  std::vector<int> attached;
  for (int i = 0; i < fds; ++i) {
    attached.push_back(::fcntl(HandedFile(), F_DUPFD_CLOEXEC, 0));
    if (attached.back() < 0) std::abort();
  }
  iovec data{const_cast<std::byte*>(bytes.data()), bytes.size()};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  std::vector<std::byte> control(fds > 0 ? CMSG_SPACE(fds * sizeof(int)) : 0);
  if (fds > 0) {
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(fds * sizeof(int));
    std::memcpy(CMSG_DATA(header), attached.data(), fds * sizeof(int));
  }
  const bool sent = ::sendmsg(socket, &message, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0;
  for (int fd : attached) ::close(fd);  // the message holds its own
  return sent;
}

// Sends each message of `input` (a 16-bit length before each: ForEachMessage): its first byte
// says how many fds go with it (0 to 3, its low two bits), the rest is the message, which may be
// empty (and then reads as the sender having closed). Then ends what the fuzzer sends, so that
// a receiver that wants more finds the end rather than waiting.
inline void SendMessages(int socket, ConstBytes input) {
  bool room = true;
  ForEachMessage(input, [&](ConstBytes message) {
    if (!room || message.empty()) return;
    room = SendMessage(socket, message.subspan(1), std::to_integer<int>(message[0]) & 3);
  });
  if (::shutdown(socket, SHUT_WR) != 0) std::abort();
}

}  // namespace ringfuse::fuzz
