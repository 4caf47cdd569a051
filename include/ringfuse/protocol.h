/// \file
/// The protocol-level API, apart from what a filesystem needs (ringfuse/ringfuse.h): for custom
/// transports, conformance checks and protocol tests. Parsing (protocol/parse.h), reply channels
/// and reply encoding (protocol/reply_channel.h), INIT negotiation (protocol/negotiate.h), the
/// request path without a Session's transport (protocol/message_server.h), and the kernel ABI
/// (wire.h, and protocol/frames.h for what a filesystem never handles) and opcode table
/// (opcode.h) they speak.
#pragma once

#include "ringfuse/opcode.h"
#include "ringfuse/protocol/frames.h"
#include "ringfuse/protocol/message_server.h"
#include "ringfuse/protocol/negotiate.h"
#include "ringfuse/protocol/parse.h"
#include "ringfuse/protocol/reply_channel.h"
#include "ringfuse/wire.h"
