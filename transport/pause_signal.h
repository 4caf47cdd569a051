// The signal that wakes a transport's worker out of a read of /dev/fuse it blocks in, for Pause:
// its handler does nothing and is installed without SA_RESTART, so the read fails with EINTR
// (a threads worker's read(2), or a uring worker's read issued inline by its io_uring_enter) and
// the worker looks at why it was woken. A real-time signal, which applications rarely use.
#pragma once

namespace ringfuse::internal {

// SIGRTMAX - 1.
int PauseSignal();
// Installs the do-nothing handler, once per process.
void InstallPauseSignal();
// On a worker's thread: the signal may reach it even where the application blocks it.
void UnblockPauseSignal();

}  // namespace ringfuse::internal
