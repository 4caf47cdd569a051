// The bodies of the checks about invalidating a cache wholesale, with the server's invalidation a
// parameter: the catalogue passes the notification under test, and the negative controls
// (tests/tools/conform_kernel_test.cc) a server that sends none, which must make the checks fail.
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "ringfuse/ringfuse.h"
#include "tools/conform/context.h"

namespace ringfuse::conform {

// What the server does to make the kernel forget what it cached, once the tree has changed.
using Invalidate = std::function<absl::Status(Notifier&)>;

// Names cached for an hour, in the root and a directory, are each looked up again exactly once
// after `invalidate`, and not before it.
void ExpectEachCachedNameLookedUpOnceAfter(CheckContext& context, const Invalidate& invalidate);

// Clients readlink() symlinks in a loop while the server switches every link to a new node with a
// longer target (a new revision) and calls `invalidate`; afterwards no client may read an old
// target, and none ever reads a target cut short.
void ExpectNoStaleOrTruncatedLinkAcrossSwitch(CheckContext& context, const Invalidate& invalidate);

}  // namespace ringfuse::conform
