#include "tools/null_server.h"

#include <cstdio>
#include <memory>

#include "ringfuse/session.h"
#include "ringfuse/signals.h"
#include "tools/null_fs.h"

namespace ringfuse::tools {

int ServeNullFs(const std::string& transport, int depth, const std::string& mountpoint) {
  StopSignals signals;  // before any thread exists
  absl::StatusOr<TransportKind> kind = ParseTransportKind(transport);
  if (!kind.ok()) return std::fprintf(stderr, "%s\n", kind.status().ToString().c_str()), 2;
  SessionOptions options;
  options.mount.mountpoint = mountpoint;
  options.mount.fsname = "ringfuse-null";
  options.transport = *kind;
  options.transport_options.queue_depth = depth;
  NullFs fs;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Start(options, fs);
  if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().ToString().c_str()), 1;
  std::printf("ready\n");
  std::fflush(stdout);
  signals.Wait(**session);
  return 0;
}

}  // namespace ringfuse::tools
