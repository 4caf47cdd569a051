// Scratch memory for building a reply, one buffer per worker thread.
#pragma once

#include <cstddef>

#include "protocol/bytes.h"

namespace ringfuse::daemon {

// At least `size` bytes for the calling thread, valid until its next call: the request path
// allocates only when a larger size than before is asked for. Empty when the memory cannot be
// had, for the caller to answer ENOMEM: an allocation failure must not end the daemon.
MutableBytes ThreadBuffer(size_t size);

}  // namespace ringfuse::daemon
