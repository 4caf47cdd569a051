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
// the reply is committed. A request that finds no free entry on its CPU's queue waits in the
// kernel, and only a commit on that queue hands it out (COMMIT_AND_FETCH takes the oldest one;
// REGISTER takes none, fs/fuse/dev_uring.c). So a queue keeps a reserve of free entries: whenever
// fewer are free, it registers new ones (the kernel accepts REGISTER at any time), up to
// kMaxEntriesPerQueue. The reserve starts at `queue_depth` and doubles, up to kMaxReserve, each
// time the kernel hands out the last free entry. Entries are never unregistered (the kernel
// cannot): a queue keeps the most it ever needed, costing address space, and resident memory
// only for what requests wrote.
//
// No reserve holds every burst: requests that came at once, before the queue's thread ran
// again, wait in the kernel, and if every request the queue then holds is parked, none
// commits, whatever entries it adds; the unlock that would end the waits may be among those
// waiting. So a queue that holds only parked requests, once requests came since, waits at most
// a millisecond for a commit and then makes a request of its own on its CPU: a RETRIEVE of no
// bytes of a parked request's node, answered by a NOTIFY_REPLY that takes a free entry and is
// committed at once, handing out the oldest waiting request. Until the kernel has none left.
// The kernel retrieves only from regular files: a queue whose parked requests name none says so
// once in the log, and what waits there waits for a commit.
// The guarantee: with at most kMaxLateRequestsPerQueue requests of a queue answered late, no
// number of them stops that CPU's other requests. A handler that may hold many requests
// unanswered must bound them below it (ringfused's lock waiter does, with ENOLCK beyond); past
// it, requests from a CPU whose queue is full wait until one is answered.
#pragma once

#include <memory>

#include "transport/dev_fuse_channel.h"
#include "transport/inflight.h"
#include "transport/ring_worker.h"
#include "transport/transport.h"

namespace ringfuse::internal {

class UringCmdTransport : public Transport {
 public:
  static constexpr size_t kMaxEntriesPerQueue = 1024;
  static constexpr size_t kMaxReserve = 64;
  static constexpr size_t kMaxLateRequestsPerQueue = kMaxEntriesPerQueue - kMaxReserve;

  // Fails unless INIT agreed on FUSE-over-io_uring; a queue per possible CPU.
  static absl::StatusOr<std::unique_ptr<Transport>> Create(const TransportContext& context);
  ~UringCmdTransport() override;

  TransportKind kind() const override { return TransportKind::kUringCmd; }
  InterruptSink& interrupt_sink() override { return inflight_; }
  absl::Status Start() override;
  void Stop() override { queues_.Stop(); }
  void Join() override { queues_.Join(); }
  absl::Status Pause(absl::Duration) override { return CanPause(); }
  absl::Status CanPause() const override {
    return absl::UnimplementedError(
        "a uring-cmd session cannot be handed over yet: on 6.18 the kernel does not resend "
        "requests that ring entries hold (hand over from the threads or uring transport)");
  }
  std::string Describe() const override;

 private:
  UringCmdTransport(const TransportContext& context, size_t queue_count);

  // Serves what still comes over /dev/fuse, on the thread after the queues'.
  void ReadDevFuse();
  size_t DevFuseSlot() const { return queue_count_; }

  TransportContext context_;
  size_t queue_count_;
  size_t depth_;
  size_t payload_size_;
  // One slot per queue, then /dev/fuse: a queue's thread runs one handler at a time.
  InflightTable inflight_;
  std::unique_ptr<DevFuseReplyChannel> dev_channel_;  // for what the /dev/fuse reader serves
  RingWorkers queues_;  // last: its destructor joins the threads that use the members above
};

}  // namespace ringfuse::internal
