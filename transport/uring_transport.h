// The `uring` transport: io_uring READ and WRITE on /dev/fuse. One ring and one cloned fd per
// worker, `queue_depth` reads in flight per ring. A reply made while the handler runs is copied
// into its slot's reply buffer and submitted linked before the slot's next READ, in the same
// io_uring_enter that waits for the next completion; a reply made later from another thread is
// written directly with writev.
//
// Pause, for a handover, takes each ring's reads back with ASYNC_CANCEL. It does not wait for a
// reply made later from another thread, which goes by writev as before, as with the threads
// transport: while this transport lives it reaches the kernel, which takes it until the new
// process has had the request resent and refuses it (ENOENT) after; once this transport is
// gone, it is dropped.
#pragma once

#include "transport/inflight.h"
#include "transport/pause_request.h"
#include "transport/ring_worker.h"
#include "transport/transport.h"

namespace ringfuse::internal {

class UringTransport : public Transport {
 public:
  explicit UringTransport(const TransportContext& context);

  TransportKind kind() const override { return TransportKind::kUring; }
  InterruptSink& interrupt_sink() override { return inflight_; }
  absl::Status Start() override;
  void Stop() override { workers_.Stop(); }
  void Join() override { workers_.Join(); }
  // Each ring cancels its reads, answers what it had read before the cancel took effect, and
  // settles; then the rings' threads end. A ring that has not settled within `bound` (a handler
  // still busy, a read the kernel does not give back) makes every ring read again.
  absl::Status Pause(absl::Duration bound) override;
  std::string Describe() const override;

 private:
  TransportContext context_;
  size_t worker_count_;
  size_t depth_;
  size_t buffer_size_;
  InflightTable inflight_;  // worker w's slot s is entry w * depth_ + s
  PauseRequest pause_;
  RingWorkers workers_;  // last: its destructor joins the threads that use the members above
};

}  // namespace ringfuse::internal
