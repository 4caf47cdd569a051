/// \file
/// Ending a session on SIGTERM and SIGINT, the way FUSE daemons do.
///
/// Signals must be blocked in every thread of the process so that none of the session's threads
/// is chosen to take them (and die by the default action): construct a StopSignals first in
/// main(), before any thread exists, then hand the session to Wait().
#pragma once

#include <signal.h>

#include <initializer_list>

#include "ringfuse/export.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

class Session;

/// Blocks the stop signals for the whole process and turns the first one into Session::Stop().
class StopSignals {
 public:
  /// Blocks `signals` in the calling thread; threads created afterwards inherit the mask.
  explicit StopSignals(std::initializer_list<int> signals = {SIGTERM, SIGINT});

  /// Waits for one of the signals, then stops `session` (unmount, abort if needed) and waits for
  /// it to end. Returns the signal number, or 0 if the session ended first by itself.
  int Wait(Session& session);

 private:
  sigset_t set_;
};

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
