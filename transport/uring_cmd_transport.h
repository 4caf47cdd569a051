// The `uring-cmd` transport: the kernel's FUSE-over-io_uring.
//
// One queue per possible CPU (the kernel uses none until every one has an entry), each a thread
// pinned to its CPU with its own SQE128 ring and `queue_depth` entries. An entry is a 288-byte
// header buffer and a payload buffer sized from the negotiated max_write and max_pages, mapped
// but not touched until the kernel writes into it. The kernel queues a request on the caller's
// CPU, so a request is received, handled and committed on one CPU, by one thread, with no lock:
// the reply is committed with COMMIT_AND_FETCH, batched with the others of the same wake-up.
// FORGET, BATCH_FORGET, INTERRUPT and anything queued before the rings were ready still arrive
// on /dev/fuse, served by one reader thread, whose ENODEV at unmount also stops the queues.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "transport/dev_fuse_channel.h"
#include "transport/inflight.h"
#include "transport/transport.h"
#include "transport/worker_threads.h"

namespace ringfuse {

class UringQueue;

class UringCmdTransport : public Transport {
 public:
  explicit UringCmdTransport(const TransportContext& context);
  ~UringCmdTransport() override;

  TransportKind kind() const override { return TransportKind::kUringCmd; }
  absl::Status Start() override;
  void Stop() override;
  void Join() override { threads_.Join(); }
  std::string Describe() const override;

 private:
  friend class UringQueue;

  absl::Status SetUpThread(size_t index);
  void RunThread(size_t index);
  size_t DevFuseSlot() const { return queue_count_ * depth_; }

  TransportContext context_;
  size_t queue_count_ = 0;
  size_t depth_;
  size_t payload_size_;
  std::vector<int> cpus_;
  std::unique_ptr<InflightTable> inflight_;  // queue q's entry e is q * depth_ + e; then /dev/fuse
  std::unique_ptr<DevFuseReplyChannel> dev_channel_;  // for what the /dev/fuse reader serves
  std::vector<std::unique_ptr<UringQueue>> queues_;
  std::atomic<bool> stopping_{false};
  WorkerThreads threads_;  // one per queue, then the /dev/fuse reader
};

}  // namespace ringfuse
