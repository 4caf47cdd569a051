// One-line, strace-like descriptions of requests and replies, for -d and the tracer.
#pragma once

#include <cstdint>
#include <string>

#include "ringfuse/request.h"

namespace ringfuse {

// "LOOKUP unique=12 nodeid=1 uid=1000 gid=1000 pid=42 name=\"etc\""
std::string DescribeRequest(const Request& request);

// "reply unique=12 error=0 (2 bytes)" or "reply unique=12 error=-ENOENT"
std::string DescribeReply(uint64_t unique, int32_t error, size_t body_size);

}  // namespace ringfuse
