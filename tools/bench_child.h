// The daemons ringfuse-bench runs as children (bench_daemon.h, compare_daemon.h): how a child
// sets itself up before exec, and how the benchmark reaps it.
#pragma once

#include <sys/types.h>

#include <optional>

namespace ringfuse::tools {

// In the child, before exec: its own process group, so that Ctrl-C reaches only the benchmark,
// which then stops the daemon in order; SIGTERM should the benchmark die, so that the daemon
// unmounts anyway; stdout and stderr to `log_fd`. Exits if the benchmark is already gone.
void BecomeDaemonChild(int log_fd, pid_t benchmark);

// The child's wait status once it has ended, or nothing while it runs (or if it cannot be
// waited for).
std::optional<int> ReapChild(pid_t pid, bool block);

}  // namespace ringfuse::tools
