// What travels from the old process to the new one in a handover (see ringfuse/handover.h), and
// how it goes over the socket: the connection's identity and INIT agreement, the application's
// bytes, and the fds (the connection's /dev/fuse fd first, then the application's).
//
// On the socket (SOCK_SEQPACKET, both ends on one machine, so integers in native order): a run
// of messages, each a u32 count of record bytes it carries, those bytes, and up to
// kMaxFdsPerMessage fds attached. The record starts with a magic, a format version and the
// totals of bytes and fds, so the receiver knows when it has everything and refuses what it
// cannot read.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/fd.h"
#include "ringfuse/handover.h"
#include "ringfuse/init.h"
#include "ringfuse/mount_options.h"

namespace ringfuse::internal {

struct HandoverRecord {
  Negotiated negotiated;
  std::string mountpoint;
  MountMethod method = MountMethod::kMountSyscall;
  uint32_t connection_id = 0;
  std::string app_bytes;
  // The transport's part (Transport::Handed), and how many of the fds are its: they come right
  // after the connection's, before the application's.
  std::string transport_bytes;
  uint32_t transport_fds = 0;
};

// The record as bytes (the fds go beside it).
std::string EncodeHandoverRecord(const HandoverRecord& record);
// Refuses a record that ends early or runs on; `version` is the format it was sent in.
absl::StatusOr<HandoverRecord> DecodeHandoverRecord(std::string_view bytes, uint32_t version);

// Sends `record` with `fds` attached, in as many messages as they need.
absl::Status SendHandover(int socket, const HandoverRecord& record, std::span<const int> fds);

struct ReceivedHandover {
  HandoverRecord record;
  std::vector<base::UniqueFd> fds;  // in the order sent
};
// Receives what SendHandover sent; an error for a peer that closes early or sends more or other
// than its record announced (every fd received is then closed).
absl::StatusOr<ReceivedHandover> ReceiveHandover(int socket);

// The new process's first message, that it waits for the connection: the old one pauses only
// then, so that clients do not wait while the new process starts (exec, loading, setup).
absl::Status SendHandoverReady(int socket);
// OK once it arrives; as AwaitHandoverAck otherwise.
absl::Status AwaitHandoverReady(int socket, absl::Duration timeout);

// The one-message acknowledgement from the new process that it serves, and the wait for it.
absl::Status SendHandoverAck(int socket);
// Tells the old process why this one will not serve, so that it serves on at once.
void SendHandoverRefusal(int socket, const absl::Status& why);
// OK once the ack arrives; Aborted with the reason after a refusal; DeadlineExceeded after
// `timeout`; an error if the peer closed first.
absl::Status AwaitHandoverAck(int socket, absl::Duration timeout);

}  // namespace ringfuse::internal
