// The `threads` transport: N workers, each blocking in read() on its own cloned /dev/fuse fd and
// answering with writev() on it. The baseline the io_uring transports are measured against.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "base/fd.h"
#include "transport/dev_fuse_channel.h"
#include "transport/inflight.h"
#include "transport/transport.h"
#include "transport/worker_threads.h"

namespace ringfuse::internal {

class ThreadsTransport : public Transport {
 public:
  explicit ThreadsTransport(const TransportContext& context);
  ~ThreadsTransport() override;

  TransportKind kind() const override { return TransportKind::kThreads; }
  InterruptSink& interrupt_sink() override { return inflight_; }
  absl::Status Start() override;
  // Workers block in read(): they finish when the connection ends, which Session::Stop brings
  // about (unmount, then abort).
  void Stop() override { stopping_.store(true, std::memory_order_relaxed); }
  void Join() override { threads_.Join(); }
  // Wakes the workers out of read() with PauseSignal until each has seen `stopping_`, however
  // long that takes (`bound` is not honoured: a worker that has stopped cannot start again).
  absl::Status Pause(absl::Duration bound) override;
  std::string Describe() const override;

 private:
  TransportContext context_;
  size_t worker_count_;
  size_t buffer_size_;
  std::vector<int> fds_;                // worker i reads fds_[i]; fds_[0] is the session fd
                                        // (and all of them are, without clone_fds)
  std::vector<base::UniqueFd> clones_;  // owns fds_[1..]
  std::vector<std::unique_ptr<DevFuseReplyChannel>> channels_;  // one per worker
  InflightTable inflight_;
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> running_{0};  // workers whose loop has not ended
  WorkerThreads threads_;
};

}  // namespace ringfuse::internal
