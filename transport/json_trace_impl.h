// The internals of JsonTraceWriter (ringfuse/json_trace.h, where the format is described): the
// table pairing replies with requests, the bounded buffer and the thread that writes it out.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <thread>

#include "base/fd.h"
#include "ringfuse/json_trace.h"

namespace ringfuse::internal {

class JsonTraceWriterImpl {
 public:
  JsonTraceWriterImpl(base::UniqueFd file, size_t buffer_limit);
  ~JsonTraceWriterImpl();

  void OnRequest(const Request& request);
  void OnMalformed(const ParseError& error);
  void OnReply(const ReplyTarget& target, int32_t error, std::span<const ConstBytes> body);
  void Flush();
  uint64_t dropped() const { return dropped_total_.load(std::memory_order_relaxed); }

 private:
  // When a request began, kept until its reply; see kPendingSlots.
  struct PendingSlot {
    std::atomic<uint64_t> unique{0};
    std::atomic<uint64_t> start_ns{0};
    std::atomic<uint32_t> opcode{0};
  };

  void Remember(uint64_t unique, uint64_t start_ns, uint32_t opcode);
  // The start and opcode of `unique`'s request, if its slot still holds it; frees the slot.
  bool Recall(uint64_t unique, uint64_t& start_ns, uint32_t& opcode);
  void Append(uint64_t now_ns, const std::string& line);
  void WriterLoop();
  void WriteOut(const std::string& lines);

  const base::UniqueFd file_;
  const size_t buffer_limit_;
  std::array<PendingSlot, JsonTraceWriter::kPendingSlots> pending_slots_;

  std::mutex mutex_;
  std::condition_variable wake_writer_;
  std::condition_variable written_;
  std::string buffered_;        // whole lines not yet handed to the writer thread
  uint64_t dropped_since_ = 0;  // events dropped since the last line that fit
  uint64_t appended_ = 0;       // lines (of buffered_'s) handed over, ever
  uint64_t written_lines_ = 0;  // of those, written out (or lost to a write error)
  bool flush_wanted_ = false;
  bool stopping_ = false;
  std::atomic<uint64_t> dropped_total_{0};
  std::thread writer_;  // last: starts once everything above exists
};

}  // namespace ringfuse::internal
