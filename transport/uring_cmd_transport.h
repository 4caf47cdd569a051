// The `uring-cmd` transport: the kernel's FUSE-over-io_uring.
//
// One queue per possible CPU (the kernel uses none until every one has an entry), each a thread
// pinned to its CPU with its own SQE128 ring and `queue_depth` entries to begin with. An entry is
// a 288-byte header buffer and a payload buffer sized from the negotiated max_write and
// max_pages, mapped (MAP_NORESERVE) but not touched until the kernel writes into it. The kernel
// queues a request on the caller's CPU, so a request is received, handled and committed on one
// CPU, by one thread, with no lock: the reply is committed with COMMIT_AND_FETCH, batched with
// the others of the same wake-up. FORGET, BATCH_FORGET, INTERRUPT and anything queued before the
// rings were ready still arrive on /dev/fuse, served by one reader thread, whose ENODEV at
// unmount also stops the queues.
//
// A request answered late (after its handler returned: a parked lock wait) keeps its entry until
// the reply is committed, and a request that finds no free entry on its CPU's queue waits in the
// kernel for a commit on that queue. So a queue keeps a reserve of free entries: whenever fewer
// are free, it registers new ones (the kernel accepts REGISTER at any time), up to
// kMaxEntriesPerQueue. The reserve starts at `queue_depth` and doubles, up to kMaxReserve, each
// time the kernel hands out the last free entry. Entries are never unregistered (the kernel
// cannot): a queue keeps the most it ever needed, costing address space, and resident memory
// only for what requests wrote. What the reserve cannot exclude: more requests arriving at once
// than it holds, before the queue's thread runs again. Those that find no free entry wait in the
// kernel, and REGISTER does not take them (fs/fuse/dev_uring.c): each commit on the queue takes
// one, so they wait for the next answer on that queue. A handler that may
// hold many requests unanswered must bound them below kMaxLateRequestsPerQueue (ringfused's lock
// waiter does), or requests from a CPU whose queue is full wait until one is answered.
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
  static constexpr size_t kMaxEntriesPerQueue = 1024;
  static constexpr size_t kMaxReserve = 64;
  static constexpr size_t kMaxLateRequestsPerQueue = kMaxEntriesPerQueue - kMaxReserve;

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
  size_t DevFuseSlot() const { return queue_count_; }

  TransportContext context_;
  size_t queue_count_ = 0;
  size_t depth_;
  size_t payload_size_;
  std::vector<int> cpus_;
  // One slot per queue, then /dev/fuse: a queue's thread runs one handler at a time.
  std::unique_ptr<InflightTable> inflight_;
  std::unique_ptr<DevFuseReplyChannel> dev_channel_;  // for what the /dev/fuse reader serves
  std::vector<std::unique_ptr<UringQueue>> queues_;
  std::atomic<bool> stopping_{false};
  WorkerThreads threads_;  // one per queue, then the /dev/fuse reader
};

}  // namespace ringfuse
