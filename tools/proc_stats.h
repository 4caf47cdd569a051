// What /proc says about a server process: the CPU time it used (all its threads: the kernel sums
// them in /proc/<pid>/stat) and its peak resident memory.
#pragma once

#include <sys/types.h>

#include <optional>

namespace ringfuse::tools {

// utime + stime of a process, in microseconds (clock-tick resolution), or 0 if it is gone.
double ProcessCpuMicros(pid_t pid);

// VmHWM of a process in MiB, or nothing if it is gone.
std::optional<double> PeakRssMib(pid_t pid);

}  // namespace ringfuse::tools
