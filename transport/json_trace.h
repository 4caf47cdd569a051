// A RequestObserver that writes every request, reply and malformed message as one JSON object per
// line (ringfused --trace=FILE; any embedding daemon can attach one through
// SessionOptions::observer). ringfuse-trace summarizes and follows such files.
//
//   {"t":5,"ev":"request","unique":8,"op":"LOOKUP","nodeid":1,"pid":42,"uid":0,"gid":0,"name":"a"}
//   {"t":9,"ev":"reply","unique":8,"op":"LOOKUP","error":-2,"errno":"ENOENT","size":0,
//    "latency_ns":4}
//   {"t":12,"ev":"malformed","unique":10,"op":"MKDIR","error":"name without NUL",...}
//   {"t":20,"ev":"dropped","count":3}
//
// t is CLOCK_MONOTONIC in nanoseconds. A request's fields after the header's are those of
// VisitRequestFields (protocol/describe.h), every number in decimal; strings are escaped as
// json_line.h says. A reply names its request's opcode and the time since OnRequest (the
// handler's time; the write to the kernel comes after), found by unique in a table of
// kPendingSlots start times: a request still unanswered when that many newer ones have started
// loses its slot, and its reply has no "op" nor "latency_ns".
//
// Cost: an event is formatted into a buffer of its thread's, then copied under a mutex into a
// shared buffer that a thread of the writer's own writes out in whole lines. A slow or stuck
// file never holds up a request: once the shared buffer holds `buffer_limit` bytes, events are
// dropped and counted, and the next line that fits says how many ("ev":"dropped").
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "protocol/dispatcher.h"
#include "transport/fd.h"

namespace ringfuse {

// Creates (or truncates) the file at `path` for a JsonTraceWriter.
absl::StatusOr<UniqueFd> CreateTraceFile(const std::string& path);

class JsonTraceWriter : public RequestObserver {
 public:
  struct Options {
    size_t buffer_limit = size_t{8} << 20;  // bytes waiting for the file before events drop
  };
  static constexpr size_t kPendingSlots = 8192;

  // Writes to `file` (see CreateTraceFile), which it then owns.
  JsonTraceWriter(UniqueFd file, Options options);
  explicit JsonTraceWriter(UniqueFd file) : JsonTraceWriter(std::move(file), Options{}) {}
  // Writes out what is buffered (waiting for the file as long as it takes), then closes it.
  ~JsonTraceWriter() override;

  void OnRequest(const Request& request) override;
  void OnMalformed(const ParseError& error) override;
  void OnReply(const ReplyTarget& target, int32_t error, std::span<const ConstBytes> body) override;

  // Returns once every event observed before the call is in the file (or dropped).
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

  const UniqueFd file_;
  const size_t buffer_limit_;
  std::array<PendingSlot, kPendingSlots> pending_slots_;

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

}  // namespace ringfuse
