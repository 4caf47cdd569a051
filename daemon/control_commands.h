// What ringfused answers on its control socket, and how ringfuse-ctl reads the answers.
//
//   publish REV METHOD  ->  ok revision=REV method=METHOD switch_us=.. invalidate_us=..
//                              entries=.. inodes=.. messages=.. not_cached=.. epoch_fallback=0|1
//   status              ->  ok revision=REV nodes=.. lookups=.. pid=..
//   anything wrong      ->  error MESSAGE
//
// Revision names are single words (no spaces or control characters), so a line splits on spaces.
#pragma once

#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "daemon/inode_table.h"
#include "daemon/revisions.h"

namespace ringfuse::daemon {

using ControlFields = absl::flat_hash_map<std::string, std::string>;

std::string AnswerControl(std::string_view request, Publisher& publisher, const InodeTable& table);

// The fields of an "ok" reply, or the daemon's error as a status.
absl::StatusOr<ControlFields> ParseControlReply(std::string_view reply);

}  // namespace ringfuse::daemon
