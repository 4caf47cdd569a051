// Scratch memory for building a reply, one buffer per worker thread.
#pragma once

#include <cstddef>

#include "ringfuse/bytes.h"

namespace ringfuse::daemon {

// At least `size` bytes for the calling thread, valid until its next call: the request path
// allocates only when a larger size than before is asked for. Empty when the memory cannot be
// had, for the caller to answer ENOMEM: an allocation failure must not end the daemon.
//
// Page-aligned, so that O_DIRECT reads can fill it (see direct_file.h), and touched when
// allocated: an O_DIRECT read pins the pages it fills, and pages not yet faulted in would make
// it take the process's mmap lock.
MutableBytes ThreadBuffer(size_t size);

}  // namespace ringfuse::daemon
