// The shipped ringfused's test hooks: none. The seam (test_hooks.h) is all that ships; the
// hooks themselves are built only into tests/daemon's ringfused-hooked, whose own definitions
// of these functions are linked before this library is searched, so this member of
// ringfused_core is never pulled into that binary.
#include "daemon/test_hooks.h"

namespace ringfuse::daemon {

void StopHereIfTestAsks(std::string_view) {}
RequestObserver* LookupHangIfTestAsks() { return nullptr; }
void HangInChangeIfTestAsks(std::string_view, std::string_view) {}
void StopTestHangs() {}

}  // namespace ringfuse::daemon
