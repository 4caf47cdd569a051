// The `uring-cmd` transport: the kernel's FUSE-over-io_uring.
//
// One queue per possible CPU (the kernel uses none until every one has an entry), each a thread
// pinned to its CPU with its own SQE128 ring and `queue_depth` entries to begin with
// (uring_queue.h). An entry is a 288-byte header buffer and a payload buffer sized from the
// negotiated max_write and max_pages, in a memfd mapped (MAP_NORESERVE) but not touched until
// the kernel writes into it (ring_entry_block.h). The kernel queues a request on the caller's
// CPU, so a request is received, handled and committed on one CPU, by one thread, with no lock:
// the reply is committed with COMMIT_AND_FETCH, batched with the others of the same wake-up.
// FORGET, BATCH_FORGET, INTERRUPT and anything queued before the rings were ready still arrive
// on /dev/fuse, served by one reader thread, whose ENODEV at unmount also stops the queues.
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
//
// A handover (Pause, Handed) passes the ring entries themselves, with the requests they hold, to
// the new process: uring_cmd_handover.h says why and how.
#pragma once

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "ringfuse/handler.h"
#include "transport/dev_fuse_channel.h"
#include "transport/inflight.h"
#include "transport/ring_worker.h"
#include "transport/transport.h"
#include "transport/uring_queue.h"

namespace ringfuse::internal {

class UringCmdTransport : public Transport {
 public:
  static constexpr size_t kMaxEntriesPerQueue = UringQueue::kMaxEntriesPerQueue;
  static constexpr size_t kMaxReserve = UringQueue::kMaxReserve;
  static constexpr size_t kMaxLateRequestsPerQueue = kMaxEntriesPerQueue - kMaxReserve;
  static_assert(kMaxLateRequestsPerQueue == ringfuse::kMaxLateRequestsPerQueue,
                "the limit handler.h publishes is this transport's");

  // Fails unless INIT agreed on FUSE-over-io_uring; a queue per possible CPU. With
  // context.adopted, the queues take over the entries another process handed over.
  static absl::StatusOr<std::unique_ptr<Transport>> Create(const TransportContext& context);
  ~UringCmdTransport() override;

  TransportKind kind() const override { return TransportKind::kUringCmd; }
  InterruptSink& interrupt_sink() override { return inflight_; }
  absl::Status Start() override;
  void Stop() override;
  void Join() override { queues_.Join(); }
  // Pauses the /dev/fuse reader, freezes every queue, fills their free entries with requests of
  // its own, and hands the entries off; DeadlineExceeded (and serving on) past `bound`.
  absl::Status Pause(absl::Duration bound) override;
  absl::StatusOr<TransportHandover> Handed() override;
  bool ResumeInPlace() override;
  std::string Describe() const override;

 private:
  UringCmdTransport(const TransportContext& context, size_t queue_count,
                    std::vector<UringQueue::Adopted> adopted);
  static absl::StatusOr<std::vector<UringQueue::Adopted>> MapAdopted(RingsHandover& adopted,
                                                                     size_t queue_count,
                                                                     size_t payload_stride);

  // Serves what still comes over /dev/fuse, on the thread after the queues'.
  void ReadDevFuse();
  size_t DevFuseSlot() const { return queue_count_; }
  absl::Status PauseReader(absl::Time deadline);
  void ResumeReader();
  // Waits until `done` holds for every queue, or DeadlineExceeded naming `what`.
  template <typename Done>
  absl::Status AwaitQueues(absl::Time deadline, const char* what, Done&& done) const;
  absl::Status FillQueues(absl::Time deadline);

  TransportContext context_;
  size_t queue_count_;
  size_t depth_;
  size_t payload_size_;
  std::vector<UringQueue::Adopted> adopted_;  // until Start gives each queue its own
  // One slot per queue, then /dev/fuse: a queue's thread runs one handler at a time.
  InflightTable inflight_;
  std::unique_ptr<DevFuseReplyChannel> dev_channel_;  // for what the /dev/fuse reader serves
  std::vector<UringQueue*> queue_list_;               // owned by queues_

  // The reader's halt: Stop and Pause set it; a paused reader parks until resumed or stopped.
  std::atomic<bool> reader_halt_{false};
  std::mutex reader_mutex_;
  std::condition_variable reader_changed_;
  bool reader_paused_ = false;              // guarded by reader_mutex_
  bool reader_parked_ = false;              // guarded by reader_mutex_
  std::atomic<pthread_t> reader_thread_{};  // for the pause's signal, once it runs

  RingWorkers queues_;  // last: its destructor joins the threads that use the members above
};

}  // namespace ringfuse::internal
