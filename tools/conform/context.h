// What a check works with: mounts of its own filesystem over the transport under test, the log
// of every request the kernel sent them, and the expectations that decide pass or fail.
//
// A check reads like a selftest: it builds a filesystem (usually MemFs, examples/memfs), mounts it
// with Mount, acts as a client with plain system calls on Mounted::Path, and states what it
// expects with Expect and ExpectInOrder. Everything it records (Evidence, Coverage, the failed
// expectations) goes into the report.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ringfuse/ringfuse.h"
#include "tools/conform/result.h"

namespace ringfuse::conform {

// Every request the kernel sent a mount, in arrival order; a RequestObserver of its session.
class RequestLog : public RequestObserver {
 public:
  struct Entry {
    uint32_t opcode = 0;
    uint64_t unique = 0;
    uint64_t nodeid = 0;
    uint64_t size = 0;    // READ: the bytes asked for; WRITE: the bytes carried
    uint64_t target = 0;  // INTERRUPT: the unique of the request interrupted
    std::string line;     // DescribeRequest's
  };

  void OnRequest(const Request& request) override;
  void OnMalformed(const ParseError& error) override;
  void OnReply(const ReplyTarget&, int32_t, std::span<const ConstBytes>) override {}

  // The position the next request will take; Since(mark) returns what came after it.
  size_t Mark() const;
  std::vector<Entry> Since(size_t mark) const;
  // The opcode names of Since(mark), e.g. {"LOOKUP", "GETATTR"}.
  std::vector<std::string> OpcodesSince(size_t mark) const;
  size_t CountSince(size_t mark, Opcode opcode) const;
  // Waits until no request has come for `quiet`, counted from the call at the earliest (at most
  // `bound`): asynchronous requests (RELEASE after close, FORGET, readahead) arrive after the
  // system call that caused them returned.
  void Settle(std::chrono::milliseconds quiet = std::chrono::milliseconds(100),
              std::chrono::milliseconds bound = std::chrono::seconds(3)) const;
  // Waits until `count` requests with `opcode` came after `mark`, at most `bound`. A request is
  // logged as it is read, before its handler runs: state the handler changes may lag behind.
  bool WaitFor(size_t mark, Opcode opcode,
               std::chrono::milliseconds bound = std::chrono::seconds(5), size_t count = 1) const;
  // Every opcode this log saw, by number.
  std::vector<uint32_t> Opcodes() const;

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable arrived_;
  std::vector<Entry> entries_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

class CheckContext;

// One mount of a check's filesystem: a Session over a fresh directory, its request log, and a
// watchdog that aborts the connection if the mount outlives kWatchdogBound, so that a client
// call stuck on a misbehaving kernel or server fails instead of hanging the run.
class Mounted {
 public:
  static constexpr std::chrono::seconds kWatchdogBound{30};

  ~Mounted();
  Mounted(const Mounted&) = delete;
  Mounted& operator=(const Mounted&) = delete;

  // The mountpoint, or a path below it.
  const std::string& root() const { return root_; }
  std::string Path(std::string_view relative) const;
  Session& session() { return *session_; }
  Notifier& notifier() { return session_->notifier(); }
  const Negotiated& negotiated() const { return session_->negotiated(); }
  RequestLog& log() { return log_; }
  // Stops the session and unmounts; the destructor does it too.
  void Unmount();

 private:
  friend class CheckContext;
  explicit Mounted(CheckContext& context) : context_(context) {}
  void Watch();

  CheckContext& context_;  // told what the mount saw when it comes down
  std::string root_;
  RequestLog log_;
  std::unique_ptr<Session> session_;
  std::mutex watchdog_mutex_;
  std::condition_variable watchdog_wake_;
  bool ending_ = false;
  std::thread watchdog_;
};

class CheckContext {
 public:
  CheckContext(std::string_view check, TransportKind transport, const KernelOffer& offer);

  TransportKind transport() const { return transport_; }
  const KernelOffer& offer() const { return offer_; }

  // Mounts `fs` over the transport under test, in a fresh directory, with `options` (their
  // mountpoint, transport and observer are the context's). Null, with the check failed and the
  // reason recorded, if the mount fails. The mount comes down when the Mounted goes: declare it
  // after `fs`, which must outlive it.
  std::unique_ptr<Mounted> Mount(Handler& fs, SessionOptions options = {});

  // Records `what` as an expectation not met unless `ok`; returns `ok`.
  bool Expect(bool ok, std::string_view what);
  // Expects the opcode names `must` to occur in `seen` in this order, others allowed between
  // them (a kernel may add a GETATTR or a GETXATTR); a name ending in '*' matches every opcode
  // it begins ("COPY_FILE_RANGE*").
  bool ExpectInOrder(std::string_view during, const std::vector<std::string>& seen,
                     const std::vector<std::string>& must);
  // Records a line of evidence: what the client got, what the server saw.
  void Evidence(std::string line);
  // Records the opcodes a client action produced, for the coverage map.
  void Coverage(std::string_view action, std::vector<std::string> opcodes);
  // The kernel does not offer what the check needs; the check should return.
  void NotOffered(std::string reason);

  // The result, once the check has returned (and its mounts are down).
  Result Finish(double seconds);
  // Every opcode the check's mounts saw, by number.
  const std::vector<uint32_t>& opcodes_seen() const { return opcodes_seen_; }

 private:
  friend class Mounted;
  void Fail(std::string reason);

  std::string check_;
  TransportKind transport_;
  const KernelOffer& offer_;
  std::mutex mutex_;  // the watchdog fails a check from its own thread
  Result result_;
  std::vector<uint32_t> opcodes_seen_;
};

}  // namespace ringfuse::conform
