// What a kept daemon and its keeper say to each other (ringfuse/keeper.h), on a SOCK_SEQPACKET
// unix socket, one message each:
//
//   daemon -> keeper   hello                    at start: is there a connection to recover?
//   keeper -> daemon   fresh                    no: mount, and deposit the connection
//                      kept INCARNATION NOTE    yes: the connection follows, as a handover's
//                                               record (SendHandover) with its /dev/fuse fd
//                                               and the application's kept fds
//   daemon -> keeper   deposit                  after INIT; the connection and the kept fds
//                                               follow (SendHandover)
//                      note BYTES               replaces what a later incarnation is told
//                      serving                  a recovered connection is served again
//
// Each message starts with a u32 kind; integers in native order (one machine).
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ringfuse::internal {

// The largest note a keeper holds: one message, well within a socket's send buffer.
inline constexpr size_t kMaxKeptNote = 64 * 1024;
// The most fds of the application it holds beside the connection's.
inline constexpr size_t kMaxKeptFds = 16;

struct KeeperHello {};
struct KeeperDeposit {};
struct KeeperNote {
  std::string bytes;
};
struct KeeperServing {};
using DaemonMessage = std::variant<KeeperHello, KeeperDeposit, KeeperNote, KeeperServing>;

struct KeeperFresh {};
struct KeeperKept {
  uint32_t incarnation = 0;
  std::string note;
};
using KeeperAnswer = std::variant<KeeperFresh, KeeperKept>;

absl::Status SendDaemonMessage(int socket, const DaemonMessage& message);
// NotFound once the daemon closed its end; InvalidArgument for a message no daemon sends.
absl::StatusOr<DaemonMessage> ReceiveDaemonMessage(int socket);

absl::Status SendKeeperAnswer(int socket, const KeeperAnswer& answer);
// DeadlineExceeded past `timeout`; an error if the keeper closed or sent something else.
absl::StatusOr<KeeperAnswer> ReceiveKeeperAnswer(int socket, absl::Duration timeout);

}  // namespace ringfuse::internal
