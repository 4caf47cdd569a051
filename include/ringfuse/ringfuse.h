/// \file
/// Everything a filesystem built on ringfuse needs, in one include.
#pragma once

#include "ringfuse/backing.h"
#include "ringfuse/handler.h"
#include "ringfuse/json_trace.h"
#include "ringfuse/log.h"
#include "ringfuse/mount_options.h"
#include "ringfuse/notifier.h"
#include "ringfuse/observer.h"
#include "ringfuse/reply.h"
#include "ringfuse/request.h"
#include "ringfuse/session.h"
#include "ringfuse/signals.h"
#include "ringfuse/transport_options.h"
#include "ringfuse/version.h"
#include "ringfuse/wire.h"

/// \namespace ringfuse
/// The library: sessions, handlers, replies, notifications, logging and tracing.

/// \namespace ringfuse::wire
/// The kernel's FUSE ABI: its structs, constants and flags, in the kernel's layout.

/// \namespace ringfuse::op
/// The decoded arguments of each request, one struct per operation.
