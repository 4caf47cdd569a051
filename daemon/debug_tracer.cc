#include "daemon/debug_tracer.h"

#include <string>

#include "ringfuse/observer.h"

namespace ringfuse::daemon {

void DebugTracer::OnRequest(const Request& request) { Print(DescribeRequest(request)); }

void DebugTracer::OnMalformed(const ParseError& error) {
  Print("malformed message: " + error.ToString());
}

void DebugTracer::OnReply(const ReplyTarget& target, int32_t error,
                          std::span<const ConstBytes> body) {
  size_t size = 0;
  for (const ConstBytes part : body) size += part.size();
  Print("  " + DescribeReply(target.unique, error, size));
}

void DebugTracer::Print(const std::string& line) {
  std::lock_guard lock(mutex_);
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

}  // namespace ringfuse::daemon
