// What ringfused asks of the library for a set of daemon options: the mount and what INIT wishes.
#pragma once

#include "daemon/options.h"
#include "ringfuse/session.h"

namespace ringfuse::daemon {

SessionOptions MakeSessionOptions(const DaemonOptions& options);

}  // namespace ringfuse::daemon
