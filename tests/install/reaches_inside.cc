// A program that reaches inside the library: scripts/check_includes must refuse it (the negative
// control of that check, run by tests/install/CMakeLists.txt). Never compiled.
#include "ringfuse/ringfuse.h"
#include "transport/fd_passing.h"
