// What ringfused answers on its control socket, and how ringfuse-ctl reads the answers.
//
//   publish REV METHOD  ->  ok revision=REV method=METHOD switch_us=.. invalidate_us=..
//                              entries=.. inodes=.. messages=.. not_cached=.. epoch_fallback=0|1
//   status              ->  ok revision=REV nodes=.. lookups=.. pid=..  (no revision= in
//                           passthrough mode)
//   restart [BINARY]    ->  ok pid=NEWPID pause_us=.. save_us=.. state_bytes=.. state_fds=..
//   anything wrong      ->  error MESSAGE
//
// Revision names are single words (no spaces or control characters), so a line splits on spaces.
// BINARY, an absolute path, is the rest of the line, so that it may hold spaces.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "daemon/handover/restart.h"
#include "daemon/inodes/inode_table.h"
#include "daemon/revisions/invalidation.h"
#include "daemon/revisions/revisions.h"

namespace ringfuse::daemon {

using ControlFields = absl::flat_hash_map<std::string, std::string>;

struct PublishRequest {
  std::string revision;  // a single word
  InvalidationMethod method;
};
struct StatusRequest {};
struct RestartRequest {
  std::string binary;  // absolute; empty: the daemon's own program
};
using ControlRequest = std::variant<PublishRequest, StatusRequest, RestartRequest>;

// Restarts the daemon as `binary` (empty: its own program): RestartDaemon, bound to the running
// daemon and the server answering.
using RestartFunction = std::function<absl::StatusOr<RestartReport>(const std::string& binary)>;

// What a request line asks for, or why it is refused (the message of the "error" reply). Pure,
// so that what a client can send is tested and fuzzed without a daemon behind it.
absl::StatusOr<ControlRequest> ParseControlRequest(std::string_view request);

// `publisher`: null in passthrough mode, where publish is refused.
std::string AnswerControl(std::string_view request, Publisher* publisher, const InodeTable& table,
                          const RestartFunction& restart);

// The fields of an "ok" reply, or the daemon's error as a status.
absl::StatusOr<ControlFields> ParseControlReply(std::string_view reply);

}  // namespace ringfuse::daemon
