#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include "base/errno_status.h"
#include "protocol/describe.h"
#include "transport/json_line.h"
#include "transport/json_trace_impl.h"
#include "transport/log.h"

namespace ringfuse {
namespace {

// The writer thread writes at least this often, so that `ringfuse-trace follow` keeps up, and
// sooner once this much is buffered.
constexpr auto kWriteInterval = std::chrono::milliseconds(50);
constexpr size_t kWriteChunk = size_t{64} << 10;

uint64_t MonotonicNs() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

// Each thread formats its events here: grown once to the longest line, then reused.
std::string& ThreadLine() {
  thread_local std::string line;
  line.clear();
  return line;
}

// A request's decoded fields as members of its line.
class JsonFields : public internal::FieldVisitor {
 public:
  explicit JsonFields(internal::JsonLine& json) : json_(json) {}
  void Number(std::string_view name, uint64_t value, internal::FieldBase /*base*/) override {
    json_.Unsigned(name, value);
  }
  void Bytes(std::string_view name, std::string_view value) override { json_.String(name, value); }
  void Text(std::string_view name, std::string_view value) override { json_.String(name, value); }

 private:
  internal::JsonLine& json_;
};

size_t CountLines(std::string_view text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

// A daemon that traces usually runs as root and is told the path by its command line, often in
// a directory others can write (/tmp): a name planted there must not make it truncate or fill
// another file. So no symlink is followed (O_NOFOLLOW), a FIFO is not waited on (O_NONBLOCK: no
// reader, ENXIO), nothing is truncated before it is checked, and only a regular file with one
// link that the process's own user owns is written. Mode 0600: the trace names every caller's
// files.
absl::StatusOr<int> JsonTraceWriter::OpenFile(const std::string& path, bool append) {
  base::UniqueFd fd(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  if (!fd.valid()) return base::ErrnoStatus(errno, "trace file " + path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return base::ErrnoStatus(errno, "trace file " + path);
  if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != ::geteuid()) {
    return absl::PermissionDeniedError(
        "trace file " + path +
        ": not a regular file with one link owned by this process's user; refused");
  }
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 ||
      ::fcntl(fd.get(), F_SETFL, (flags & ~O_NONBLOCK) | (append ? O_APPEND : 0)) != 0 ||
      (!append && ::ftruncate(fd.get(), 0) != 0)) {
    return base::ErrnoStatus(errno, "trace file " + path);
  }
  return fd.release();
}

absl::StatusOr<int> JsonTraceWriter::CreateFile(const std::string& path) {
  return OpenFile(path, false);
}

absl::StatusOr<int> JsonTraceWriter::AppendFile(const std::string& path) {
  return OpenFile(path, true);
}

JsonTraceWriter::JsonTraceWriter(int fd, Options options)
    : impl_(std::make_unique<internal::JsonTraceWriterImpl>(base::UniqueFd(fd),
                                                            options.buffer_limit)) {}
JsonTraceWriter::JsonTraceWriter(int fd) : JsonTraceWriter(fd, Options{}) {}
JsonTraceWriter::~JsonTraceWriter() = default;

void JsonTraceWriter::OnRequest(const Request& request) { impl_->OnRequest(request); }
void JsonTraceWriter::OnMalformed(const ParseError& error) { impl_->OnMalformed(error); }
void JsonTraceWriter::OnReply(const ReplyTarget& target, int32_t error,
                              std::span<const ConstBytes> body) {
  impl_->OnReply(target, error, body);
}
void JsonTraceWriter::Flush() { impl_->Flush(); }
uint64_t JsonTraceWriter::dropped() const { return impl_->dropped(); }

internal::JsonTraceWriterImpl::JsonTraceWriterImpl(base::UniqueFd file, size_t buffer_limit)
    : file_(std::move(file)), buffer_limit_(buffer_limit) {
  buffered_.reserve(buffer_limit_);
  writer_ = std::thread([this] { WriterLoop(); });
}

internal::JsonTraceWriterImpl::~JsonTraceWriterImpl() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_writer_.notify_one();
  writer_.join();
}

void internal::JsonTraceWriterImpl::OnRequest(const Request& request) {
  const uint64_t now = MonotonicNs();
  const wire::InHeader& h = request.header;
  Remember(h.unique, now, h.opcode);
  std::string& line = ThreadLine();
  internal::JsonLine json(line);
  json.Unsigned("t", now)
      .String("ev", "request")
      .Unsigned("unique", h.unique)
      .String("op", OpcodeName(h.opcode))
      .Unsigned("nodeid", h.nodeid)
      .Unsigned("pid", h.pid)
      .Unsigned("uid", h.uid)
      .Unsigned("gid", h.gid);
  JsonFields fields(json);
  internal::VisitRequestFields(request.args, fields);
  json.End();
  Append(now, line);
}

void internal::JsonTraceWriterImpl::OnMalformed(const ParseError& error) {
  const uint64_t now = MonotonicNs();
  std::string& line = ThreadLine();
  internal::JsonLine json(line);
  json.Unsigned("t", now).String("ev", "malformed");
  if (error.unique) {
    Remember(*error.unique, now, error.opcode);  // its EIO or ENOSYS reply follows
    json.Unsigned("unique", *error.unique).String("op", OpcodeName(error.opcode));
    json.Unsigned("opcode", error.opcode);
  }
  json.String("error", ParseErrorKindName(error.kind));
  if (!error.argument.empty()) json.String("argument", error.argument);
  json.String("message", error.ToString());
  json.End();
  Append(now, line);
}

void internal::JsonTraceWriterImpl::OnReply(const ReplyTarget& target, int32_t error,
                                            std::span<const ConstBytes> body) {
  const uint64_t now = MonotonicNs();
  size_t size = 0;
  for (const ConstBytes part : body) size += part.size();
  uint64_t start = 0;
  uint32_t opcode = 0;
  const bool known = Recall(target.unique, start, opcode);
  std::string& line = ThreadLine();
  internal::JsonLine json(line);
  json.Unsigned("t", now).String("ev", "reply").Unsigned("unique", target.unique);
  if (known) json.String("op", OpcodeName(opcode));
  json.Signed("error", error);
  if (error != 0) {
    const char* name = strerrorname_np(-error);
    json.String("errno", name != nullptr ? name : "?");
  }
  json.Unsigned("size", size);
  if (known) json.Unsigned("latency_ns", now - start);
  json.End();
  Append(now, line);
}

// A slot is claimed by storing 0 first, so that a Recall racing with a newer request for the
// same slot either sees the old unique (and the old start) or fails its exchange.
void internal::JsonTraceWriterImpl::Remember(uint64_t unique, uint64_t start_ns, uint32_t opcode) {
  PendingSlot& slot = pending_slots_[unique % JsonTraceWriter::kPendingSlots];
  slot.unique.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  slot.start_ns.store(start_ns, std::memory_order_relaxed);
  slot.opcode.store(opcode, std::memory_order_relaxed);
  slot.unique.store(unique, std::memory_order_release);
}

bool internal::JsonTraceWriterImpl::Recall(uint64_t unique, uint64_t& start_ns, uint32_t& opcode) {
  PendingSlot& slot = pending_slots_[unique % JsonTraceWriter::kPendingSlots];
  if (unique == 0 || slot.unique.load(std::memory_order_acquire) != unique) return false;
  start_ns = slot.start_ns.load(std::memory_order_relaxed);
  opcode = slot.opcode.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  uint64_t expected = unique;
  return slot.unique.compare_exchange_strong(expected, 0, std::memory_order_relaxed);
}

void internal::JsonTraceWriterImpl::Append(uint64_t now_ns, const std::string& line) {
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    // Room for this line and for the line that reports what was dropped before it.
    constexpr size_t kDroppedLineSize = 64;
    if (buffered_.size() + line.size() + kDroppedLineSize > buffer_limit_) {
      ++dropped_since_;
      dropped_total_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (dropped_since_ > 0) {
      internal::JsonLine(buffered_)
          .Unsigned("t", now_ns)
          .String("ev", "dropped")
          .Unsigned("count", std::exchange(dropped_since_, 0))
          .End();
      ++appended_;
    }
    const bool below_chunk = buffered_.size() < kWriteChunk;
    buffered_.append(line);
    ++appended_;
    wake = below_chunk && buffered_.size() >= kWriteChunk;
  }
  if (wake) wake_writer_.notify_one();
}

void internal::JsonTraceWriterImpl::Flush() {
  std::unique_lock lock(mutex_);
  const uint64_t target = appended_;
  flush_wanted_ = true;
  wake_writer_.notify_one();
  written_.wait(lock, [&] { return written_lines_ >= target; });
}

void internal::JsonTraceWriterImpl::WriterLoop() {
  std::string writing;
  writing.reserve(buffer_limit_);
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_writer_.wait_for(lock, kWriteInterval, [&] {
      return stopping_ || flush_wanted_ || buffered_.size() >= kWriteChunk;
    });
    flush_wanted_ = false;
    if (buffered_.empty()) {
      written_.notify_all();
      if (stopping_) return;
      continue;
    }
    writing.swap(buffered_);
    const uint64_t lines = appended_;
    lock.unlock();
    WriteOut(writing);
    writing.clear();
    lock.lock();
    written_lines_ = lines;
    written_.notify_all();
  }
}

void internal::JsonTraceWriterImpl::WriteOut(const std::string& lines) {
  std::string_view rest = lines;
  while (!rest.empty()) {
    const ssize_t n = ::write(file_.get(), rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // A full disk may empty again: the next batch tries afresh.
      const int error = n < 0 ? errno : EIO;
      dropped_total_.fetch_add(CountLines(rest), std::memory_order_relaxed);
      Log(LogLevel::kWarning, "trace: %s; %u lines lost", std::strerror(error), CountLines(rest));
      return;
    }
    rest.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace ringfuse
