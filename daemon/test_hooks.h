// Hooks for the tests of ringfused as a binary alone, which need it to stop or die at a chosen
// point. The shipped ringfused has none (no_test_hooks.cc: each does nothing, no variable is
// read); tests/daemon's ringfused-hooked, never installed, is built with the real ones
// (tests/daemon/ringfused_test_hooks.cc), each set by an environment variable, read once:
//
// - RINGFUSED_TEST_STOP_AT=STEP: a successor (ringfuse-ctl restart) stops itself (SIGSTOP) at
//   STEP of its takeover, "starting" (before it tells its predecessor it is ready), "received"
//   (the state arrived) or "restored" (before it acknowledges), for a test to kill it there.
// - RINGFUSED_TEST_HANG_ON_LOOKUP=NAME: a LOOKUP of NAME never returns, its worker stuck inside
//   the request: what a crash in the middle of a request leaves, for a test to kill the daemon
//   then. Only in the daemon that mounted, not in one that recovered the mount after a crash.
// - RINGFUSED_TEST_HANG_IN_CHANGE=POINT:SUBJECT: a change of SUBJECT (the name a MKDIR, CREATE,
//   UNLINK, RENAME... changes, the bytes an O_APPEND write appends) that must be made once
//   across crashes (change_journal.h) never returns from POINT: "begun", recorded as begun and
//   before its backing call; "made", after that call and before the daemon recorded that it
//   made it (what a kill in the middle of the call leaves); or "recorded", after that and
//   before the reply. It says so on stderr first. Only in the daemon that mounted.
#pragma once

#include <string_view>

#include "ringfuse/observer.h"

namespace ringfuse::daemon {

void StopHereIfTestAsks(std::string_view step);

// The observer that makes LOOKUPs hang, or null when the variable is unset.
RequestObserver* LookupHangIfTestAsks();
// A change of `subject` at `point` hangs here if the test asks (RINGFUSED_TEST_HANG_IN_CHANGE).
void HangInChangeIfTestAsks(std::string_view point, std::string_view subject);
// Called when recovering after a crash: nothing hangs any more.
void StopTestHangs();

}  // namespace ringfuse::daemon
