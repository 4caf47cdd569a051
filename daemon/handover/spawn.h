// Starting another daemon process from this one, which has threads: ringfuse-ctl restart's
// successor, from the file checked at the request, and the daemon ringfuse-ctl supervise keeps.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ringfuse::daemon {

struct Program {
  std::string binary;             // a path, or a name looked up in PATH
  std::vector<std::string> argv;  // argv[0] and the arguments
  std::string directory;          // where it starts; "" for this process's
};

// Starts `program` with `fd_option` and N appended to its arguments ("--takeover-fd=", say),
// where N is a copy of `socket` that only it inherits (every other fd here is close-on-exec).
// It starts with no signal blocked or ignored (a mask survives exec; this process blocks
// SIGTERM and SIGINT in every thread), and in a session of its own with `new_session`.
absl::StatusOr<pid_t> SpawnWithSocket(const Program& program, std::string_view fd_option,
                                      int socket, bool new_session);

// The same, but starts the file open at `executable` (OpenTrustedProgram's) with execveat,
// whatever its path names by now; `program.binary` only names it in errors.
absl::StatusOr<pid_t> SpawnOpenedWithSocket(int executable, const Program& program,
                                            std::string_view fd_option, int socket,
                                            bool new_session);

}  // namespace ringfuse::daemon
