// The `uring` transport: io_uring READ and WRITE on /dev/fuse. One ring and one cloned fd per
// worker, `queue_depth` reads in flight per ring. A reply made while the handler runs is copied
// into its slot's reply buffer and submitted linked before the slot's next READ, in the same
// io_uring_enter that waits for the next completion; a reply made later from another thread is
// written directly with writev.
#pragma once

#include "transport/inflight.h"
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
  absl::Status Pause() override { return CanPause(); }
  absl::Status CanPause() const override {
    return absl::UnimplementedError(
        "a uring session cannot be handed over yet: a read the ring holds cannot yet be taken back "
        "at a clean point (hand over from the threads transport)");
  }
  std::string Describe() const override;

 private:
  TransportContext context_;
  size_t worker_count_;
  size_t depth_;
  size_t buffer_size_;
  InflightTable inflight_;  // worker w's slot s is entry w * depth_ + s
  RingWorkers workers_;     // last: its destructor joins the threads that use the members above
};

}  // namespace ringfuse::internal
