/// \file
/// A RequestObserver that writes every request, reply and malformed message as one JSON object per
/// line: ringfused --trace=FILE, and any server that sets it as SessionOptions::observer.
/// `ringfuse-trace summary FILE` and `ringfuse-trace follow FILE` read such files.
///
/// \verbatim
///   {"t":5,"ev":"request","unique":8,"op":"LOOKUP","nodeid":1,"pid":42,"uid":0,"gid":0,"name":"a"}
///   {"t":9,"ev":"reply","unique":8,"op":"LOOKUP","error":-2,"errno":"ENOENT","size":0,
///    "latency_ns":4}
///   {"t":12,"ev":"malformed","unique":10,"op":"MKDIR","opcode":9,"error":"name without NUL",
///    "argument":"name","message":"..."}
///   {"t":20,"ev":"dropped","count":3}
/// \endverbatim
///
/// t is CLOCK_MONOTONIC in nanoseconds. A request's fields after the header's are the ones the
/// -d lines show (one list), every number in decimal. Strings keep valid UTF-8 as it is and
/// write quote, backslash, control characters and each byte of an invalid UTF-8 sequence as
/// `\u00XX` (`\"` and `\\` for the first two): the line is always valid JSON, and a name that is
/// not UTF-8 reads back as its Latin-1 reading. A reply names its request's opcode and the time
/// since OnRequest (the handler's time; the write to the kernel comes after), found by unique in a
/// table of kPendingSlots start times: a request still unanswered when that many newer ones have
/// started loses its slot, and its reply has no "op" nor "latency_ns".
///
/// Cost (BENCHMARKS.md, "Tracing overhead"): an event is formatted into a buffer of its thread's,
/// then copied under a mutex into a shared buffer that a thread of the writer's own writes out in
/// whole lines. A slow or stuck file never holds up a request: once the shared buffer holds
/// `buffer_limit` bytes, events are dropped and counted, and the next line that fits says how
/// many ("ev":"dropped").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "ringfuse/export.h"
#include "ringfuse/observer.h"

// Declared outside the public region: the internals keep hidden visibility.
namespace ringfuse::internal {
class JsonTraceWriterImpl;
}  // namespace ringfuse::internal

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// The JSON-lines tracer described above; set it as SessionOptions::observer.
class JsonTraceWriter final : public RequestObserver {
 public:
  /// How the writer buffers.
  struct Options {
    size_t buffer_limit = size_t{8} << 20;  ///< bytes waiting for the file before events drop
  };
  /// Requests whose start times are kept for their replies' latency (see above).
  static constexpr size_t kPendingSlots = 8192;

  /// Creates (or truncates) `path` for a writer: a file descriptor, the caller's until given to
  /// the constructor. Separate, so that a daemon can open the file before it forks. Safe for a
  /// root daemon given a path in a directory others can write: a new file gets mode 0600; a
  /// symlink, a FIFO, a device, a hard-linked file or one another user owns is refused
  /// (PermissionDenied or the open's errno) and left as it was.
  static absl::StatusOr<int> CreateFile(const std::string& path);
  /// As CreateFile, but appends to what `path` holds (a restarted daemon's trace).
  static absl::StatusOr<int> AppendFile(const std::string& path);

  /// Writes to `fd`, which it owns from here on and closes.
  JsonTraceWriter(int fd, Options options);
  /// Writes to `fd` with the default Options.
  explicit JsonTraceWriter(int fd);
  /// Writes out what is buffered (waiting for the file as long as it takes), then closes it.
  ~JsonTraceWriter() override;
  JsonTraceWriter(const JsonTraceWriter&) = delete;
  JsonTraceWriter& operator=(const JsonTraceWriter&) = delete;

  void OnRequest(const Request& request) override;
  void OnMalformed(const ParseError& error) override;
  void OnReply(const ReplyTarget& target, int32_t error, std::span<const ConstBytes> body) override;

  /// Returns once every event observed before the call is in the file (or dropped).
  void Flush();
  /// Events dropped so far, for the bound or for a failed write.
  uint64_t dropped() const;

 private:
  static absl::StatusOr<int> OpenFile(const std::string& path, bool append);

  std::unique_ptr<internal::JsonTraceWriterImpl> impl_;
};

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
