// What the kernel says about a server process: the CPU time it used (all its threads, from its
// process CPU clock) and its peak resident memory (from /proc).
#pragma once

#include <sys/types.h>

#include <optional>

namespace ringfuse::tools {

// User and system CPU time of a process, all its threads summed, in microseconds, or 0 if it is
// gone.
double ProcessCpuMicros(pid_t pid);

// VmHWM of a process in MiB, or nothing if it is gone.
std::optional<double> PeakRssMib(pid_t pid);

}  // namespace ringfuse::tools
