// Serving the null filesystem (tools/null_fs.h) until SIGTERM: the child that ringfuse-latency
// measures, and the `floor` config of ringfuse-bench compare, the limit a daemon can approach.
#pragma once

#include <string>

namespace ringfuse::tools {

// Mounts the null filesystem at `mountpoint` over `transport` (auto, threads, uring, uring-cmd;
// `depth` 0 is each transport's default), writes "ready\n" to stdout once it serves, and
// serves until SIGTERM or SIGINT. Returns the process's exit status: call it from main().
int ServeNullFs(const std::string& transport, int depth, const std::string& mountpoint);

}  // namespace ringfuse::tools
