// Plays the kernel for ringfuse-bench stress, in-process: no /dev/fuse, no mount. One
// MessageServer over the handler is shared by every thread, as the real transports share their
// dispatcher (each thread with its own reply channel and its own worker index); each thread sends
// requests as wire bytes through its StressCaller and reads the reply back from the caller's own
// channel.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ringfuse/handler.h"
#include "ringfuse/opcode.h"
#include "ringfuse/protocol/message_server.h"
#include "ringfuse/protocol/reply_channel.h"

namespace ringfuse::tools {

// The replies to one thread's requests, which its handlers answer on that thread before Serve
// returns. One per thread, so that the fake transport adds no lock, and no cache line, that the
// threads share: even a ReplyChannel's count of outstanding replies is the thread's own.
class ReplyRecorder : public ReplyChannel {
 public:
  ReplyRecorder();
  void SendReply(const ReplyTarget& target, int32_t error,
                 std::span<const ConstBytes> body) override;

  // Forgets the replies recorded so far.
  void Clear() {
    replies_ = 0;
    body_.clear();
  }
  int replies() const { return replies_; }
  uint64_t unique() const { return unique_; }
  int32_t error() const { return error_; }
  ConstBytes body() const { return body_; }

 private:
  int replies_ = 0;
  uint64_t unique_ = 0;
  int32_t error_ = 0;
  std::vector<std::byte> body_;  // the last reply's, its capacity kept from one to the next
};

// One thread's end of the connection: uniques no other caller uses, its worker index, its
// replies. Used by one thread at a time.
class StressCaller {
 public:
  StressCaller(MessageServer& server, size_t worker, uint64_t first_unique);

  // Sends a request (its fixed argument struct `args`, then `name` and a NUL unless empty) and
  // returns the body of its one reply; an error reply, none or two is an error naming the
  // request. The body stays valid until the next request.
  absl::StatusOr<ConstBytes> Call(Opcode opcode, uint64_t nodeid, ConstBytes args,
                                  absl::string_view name = {});
  // A request the kernel expects no reply to (FORGET); a reply is an error.
  absl::Status Tell(Opcode opcode, uint64_t nodeid, ConstBytes args);

  // Requests handled so far; read by the thread that measures while this one sends.
  uint64_t handled() const { return handled_.load(std::memory_order_relaxed); }

 private:
  // The unique sent; an error only where the server refused to serve (a worker index too high).
  absl::StatusOr<uint64_t> Send(Opcode opcode, uint64_t nodeid, ConstBytes args,
                                absl::string_view name);

  MessageServer& server_;
  const size_t worker_;
  uint64_t next_unique_;
  std::vector<std::byte> message_;  // the request being sent
  ReplyRecorder replies_;
  alignas(64) std::atomic<uint64_t> handled_{0};  // a line of its own: another thread reads it
};

class StressKernel {
 public:
  // With room for `callers` threads sending at once.
  StressKernel(Handler& handler, size_t callers);

  // INIT as a 7.45 kernel sends it; an error unless the server serves after its answer.
  absl::Status Init();
  // The caller of thread `index`, below the `callers` given at construction. Every caller made
  // sends uniques of its own: none is sent twice over the whole run.
  std::unique_ptr<StressCaller> MakeCaller(size_t index);

 private:
  MessageServer server_;
  uint64_t callers_made_ = 0;
};

}  // namespace ringfuse::tools
