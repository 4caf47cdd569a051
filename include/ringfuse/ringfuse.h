// Everything a filesystem built on ringfuse needs, in one include.
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
