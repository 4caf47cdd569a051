// The interface every transport implements, and how the session picks one.
//
// A transport starts after INIT (which always travels over read/write on /dev/fuse), moves
// requests from the kernel to the dispatcher and replies back, and stops when the connection
// ends (its reads see ENODEV or ECONNABORTED) or when asked to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "protocol/dispatcher.h"
#include "ringfuse/init.h"
#include "ringfuse/transport_options.h"
#include "ringfuse/wire.h"

namespace ringfuse::internal {

struct RingsHandover;

// What a transport works with; all of it outlives the transport.
struct TransportContext {
  int session_fd;  // the connection's /dev/fuse fd, on which INIT was answered
  Dispatcher& dispatcher;
  const Negotiated& negotiated;
  TransportOptions options;
  std::string mountpoint;  // where the connection is mounted: a handover makes requests there
  // The ring entries the old process handed over with the connection (uring-cmd only); the
  // transport takes its fds.
  RingsHandover* adopted = nullptr;
};

// What a paused transport passes to the new process besides the connection's fd: bytes for its
// successor, and fds that stay open as long as the transport.
struct TransportHandover {
  std::string bytes;
  std::vector<int> fds;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual TransportKind kind() const = 0;
  // Where INTERRUPT marks the requests this transport's workers are handling. The session hands
  // it to the dispatcher before Start; it lives as long as the transport.
  virtual InterruptSink& interrupt_sink() = 0;
  // Starts the workers; returns once they run, or an error if none could start.
  virtual absl::Status Start() = 0;
  // Asks every worker to finish; returns at once. Idempotent, callable from any thread.
  virtual void Stop() = 0;
  // Waits until every worker has finished (the connection ended or Stop was called).
  virtual void Join() = 0;
  // For a handover: stops reading now, without waiting for the connection to end, and returns
  // once every worker has finished the request in its hands. The fds stay open, so a request
  // read and not yet handled stays on its processing list for NOTIFY_RESEND. A transport that
  // can take the request back (uring) gives up after `bound` and serves on, returning
  // DeadlineExceeded; one that cannot (threads) waits for its workers however long they take.
  // Unimplemented where the transport cannot stop cleanly this way: it serves on.
  virtual absl::Status Pause(absl::Duration bound) = 0;
  // Whether Pause can work here: asked before a handover waits for the new process, so that a
  // transport that cannot pause refuses at once.
  virtual absl::Status CanPause() const { return absl::OkStatus(); }
  // After a Pause that succeeded: what the new process needs to take over this transport's
  // requests (the uring-cmd transport's ring entries); nothing for the others.
  virtual absl::StatusOr<TransportHandover> Handed() { return TransportHandover{}; }
  // After a Pause that succeeded, when the handover failed: serves on in place and says true;
  // false (the default) when the session must start a new transport instead.
  virtual bool ResumeInPlace() { return false; }
  // Human-readable memory cost, e.g. "2 queues x 8 entries x 1.0 MiB payload".
  virtual std::string Describe() const = 0;
};

// `kind` must be resolved (not kAuto): the session decides after INIT.
absl::StatusOr<std::unique_ptr<Transport>> MakeTransport(TransportKind kind,
                                                         const TransportContext& context);

// Workers for the threads and uring transports: as asked, else one per online CPU.
size_t WorkerCount(const TransportOptions& options);

// What comes before a WRITE's data in a request read from /dev/fuse.
inline constexpr size_t kWriteHeaders = sizeof(wire::InHeader) + sizeof(wire::WriteIn);

// The read buffer a /dev/fuse reader needs: the kernel refuses reads smaller than a WRITE
// request's header and arguments plus max_write.
size_t DevFuseReadBufferSize(const Negotiated& negotiated);

// Memory for one request read from /dev/fuse, placed so that a WRITE's data starts on a page
// boundary: a handler can pass it to an O_DIRECT write as it is, without a copy (the
// FUSE-over-io_uring payload buffers are page-aligned already).
class DevFuseReadBuffer {
 public:
  explicit DevFuseReadBuffer(size_t size);
  std::byte* data() const { return memory_.get() + kLead; }
  size_t size() const { return size_; }

 private:
  static constexpr size_t kPage = 4096;
  static constexpr size_t kLead = kPage - kWriteHeaders;
  struct Free {
    void operator()(std::byte* memory) const;
  };

  std::unique_ptr<std::byte, Free> memory_;
  size_t size_;
};

}  // namespace ringfuse::internal
