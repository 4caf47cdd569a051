// The CONFIG arguments of ringfuse-bench compare: what serves the source tree in each column.
//
//   native                      the plain source directory, no FUSE
//   ringfused[:k=v,...]         our daemon: transport=, cache=on|off, passthrough, depth=N,
//                               threads=N, o=NAME[=VALUE] (any other -o option), trace=FILE
//                               (--trace=FILE), name=LABEL
//   floor[:transport=...]       the null filesystem over ringfuse's library (tools/null_fs.h)
//   cmd:LABEL=TEMPLATE          any FUSE daemon run in the foreground; TEMPLATE is split on
//                               spaces, {src} and {mnt} replaced, no shell involved
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ringfuse::tools {

struct CompareConfig {
  enum class Kind { kNative, kRingfused, kFloor, kCommand };
  Kind kind = Kind::kNative;
  std::string label;                // the column's title
  std::vector<std::string> argv;    // the daemon's command line, {src} and {mnt} unreplaced
  bool needs_uring_switch = false;  // FUSE-over-io_uring must be allowed at mount time
};

// Where the daemons are: ringfused, and this program (which serves the floor itself).
struct DaemonBinaries {
  std::string ringfused;
  std::string self;
};

absl::StatusOr<CompareConfig> ParseCompareConfig(const std::string& text,
                                                 const DaemonBinaries& binaries);

// The daemon's command line for one mount.
std::vector<std::string> Substitute(const std::vector<std::string>& argv, const std::string& src,
                                    const std::string& mnt);

}  // namespace ringfuse::tools
