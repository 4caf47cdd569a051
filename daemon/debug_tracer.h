// ringfused -d: every request, reply and malformed message on one line of standard error, in
// the order they happen, like strace.
#pragma once

#include <cstdio>
#include <mutex>
#include <span>
#include <string>

#include "ringfuse/observer.h"

namespace ringfuse::daemon {

class DebugTracer : public RequestObserver {
 public:
  explicit DebugTracer(std::FILE* out = stderr) : out_(out) {}

  void OnRequest(const Request& request) override;
  void OnMalformed(const ParseError& error) override;
  void OnReply(const ReplyTarget& target, int32_t error, std::span<const ConstBytes> body) override;

 private:
  void Print(const std::string& line);

  std::FILE* const out_;
  std::mutex mutex_;  // one line at a time from any number of worker threads
};

}  // namespace ringfuse::daemon
