// A kept daemon started again after a crash (ringfuse/keeper.h) is its connection's next
// incarnation. The kernel still holds the node ids and fh values the dead daemon gave out, so
// each incarnation gives out its own: node ids and fh values have 2^40 to each incarnation, and
// 2^24 incarnations fit. A node id from before answers ESTALE; an fh from before, EBADF, except
// that FLUSH and RELEASE of one succeed: its file is closed already (open_handles.h).
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "daemon/fs/passthrough_fs.h"

namespace ringfuse::daemon {

// Before the first request: `fs` gives out node ids and fh values from incarnation << 40 on.
// OutOfRange past 2^24 - 1 incarnations.
absl::Status ContinueAfterCrash(PassthroughFs& fs, uint32_t incarnation);

}  // namespace ringfuse::daemon
