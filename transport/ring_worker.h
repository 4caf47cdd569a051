// What the two io_uring transports (`uring` and `uring-cmd`) share, so that they cannot drift
// apart: a worker thread that owns one ring and lives in it, and the set of such workers with
// their threads, Start, Stop and teardown. Each transport says only what goes into its ring and
// what its completions mean.
//
// A worker's thread runs Setup, then Run: Run submits what is queued, waits for completions,
// hands each to the transport, and ends when the transport marks the worker done or Stop wakes
// it. A handler runs inside Handle, which tells INTERRUPT where the request is and remembers,
// for the worker's SendReply, that this thread is inside that slot's handler: a reply made there
// can go out with the ring's next submission instead of a write of its own.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "protocol/dispatcher.h"
#include "ringfuse/protocol/reply_channel.h"
#include "transport/inflight.h"
#include "transport/ring.h"
#include "transport/ring_waker.h"
#include "transport/user_data.h"
#include "transport/worker_threads.h"

namespace ringfuse::internal {

class RingWorker : public ReplyChannel {
 public:
  // What every worker of a transport is given; all of it outlives the worker's thread.
  struct Shared {
    const char* name;  // starts the worker's log lines, before its index
    Dispatcher& dispatcher;
    InflightTable& inflight;
    const std::atomic<bool>& stopping;
  };

  // Any thread, before the worker's thread starts: Stop() may wake a worker still in Setup.
  absl::Status OpenWaker() { return waker_.Open(); }
  // On the worker's own thread (a SINGLE_ISSUER ring belongs to the thread that creates it):
  // the ring, the buffers, and the first operations, queued for Run's first submission.
  virtual absl::Status Setup() = 0;
  // On the worker's own thread, after Setup: until the worker is done or Stop wakes it.
  void Run();
  // Any thread, any time: the worker looks at `stopping` and at its transport's hand-overs.
  void Wake() { waker_.Wake(); }

 protected:
  RingWorker(const Shared& shared, size_t index) : shared_(shared), index_(index) {}

  // Creates the ring with `flags` plus the cheapest task-work flags, or without those on kernels
  // that reject them (DEFER_TASKRUN needs 6.1). `completions` as in Ring::Init.
  absl::Status InitRing(unsigned entries, unsigned flags, unsigned completions = 0);
  // Queues the waker's read; Setup calls it once, the worker re-arms it after each wake-up.
  void ArmWaker() { waker_.Arm(ring_); }

  // Runs `dispatch(delivery)`, the handler of `slot`'s request `unique`, with `inflight_slot`
  // marking it for INTERRUPT.
  template <typename Dispatch>
  void Handle(uint32_t slot, size_t inflight_slot, uint64_t unique, Dispatch&& dispatch) {
    const std::atomic<bool>* interrupted = shared_.inflight.Begin(inflight_slot, unique);
    current_worker_ = this;
    current_slot_ = slot;
    dispatch(Delivery{this, slot, interrupted});
    current_worker_ = nullptr;
    shared_.inflight.End(inflight_slot);
  }
  // True while this thread runs the handler of `slot` (inside Handle): a reply to it is made
  // before the worker's next submission, on the thread that owns the ring.
  bool InHandlerOf(uint64_t slot) const { return current_worker_ == this && current_slot_ == slot; }

  // The loop ends after the completions at hand.
  void MarkDone() { done_ = true; }
  bool done() const { return done_; }
  bool stopping() const { return shared_.stopping.load(std::memory_order_relaxed); }
  Dispatcher& dispatcher() const { return shared_.dispatcher; }
  size_t index() const { return index_; }
  Ring& ring() { return ring_; }

  // Submits what is queued and waits; a result as Ring::SubmitAndWait's, or -ETIME after a
  // timeout that the worker asked for.
  virtual int Wait() { return ring_.SubmitAndWait(1); }
  // A Wait() that timed out with nothing completed.
  virtual void OnWaitTimeout() {}
  // One completion other than the waker's; false if `data` means nothing to this worker.
  virtual bool OnCompletion(UserData data, int result) = 0;
  // The waker fired, before the worker looks at `stopping`: a moment to take hand-overs.
  virtual void OnWake() {}
  // After each round of completions.
  virtual void AfterCompletions() {}
  // Once the loop has ended and its last submission is made.
  virtual void AfterRun() {}

 private:
  void Complete(const io_uring_cqe& cqe);

  // The worker whose handler runs on this thread, and which slot's, for InHandlerOf. Defined
  // here and constinit, so that the request path reads them without a TLS init call.
  static constinit inline thread_local const RingWorker* current_worker_ = nullptr;
  static constinit inline thread_local uint64_t current_slot_ = 0;

  Shared shared_;
  size_t index_;
  RingWaker waker_;
  // After the waker, so destroyed before it: the waker's buffer outlives the read the ring holds
  // on it. A worker whose own buffers are in the ring's operations calls ring().Exit() in its
  // destructor, which runs before they go.
  Ring ring_;
  bool done_ = false;
};

// The workers of one transport and their threads. Declare it after everything the workers use:
// its destructor stops and joins them.
class RingWorkers {
 public:
  ~RingWorkers() { Shutdown(); }

  // The flag the workers see as Shared::stopping.
  const std::atomic<bool>& stopping() const { return stopping_; }
  // Opens the worker's waker and keeps it for Start.
  absl::Status Add(std::unique_ptr<RingWorker> worker);
  // Runs each worker on a thread of its own, and `companion`, if given, on one more. Returns
  // once every Setup has finished: OK, or the first error, having stopped the others.
  absl::Status Start(std::function<void()> companion = nullptr);
  // Any thread, any number of times: every worker finishes its round and ends.
  void Stop();
  // Any thread: every worker calls OnWake soon, and, unless stopping, goes on.
  void WakeAll();
  // Sends `signal` to every worker's thread not yet joined.
  void Signal(int signal) { threads_.Signal(signal); }
  void Join() { threads_.Join(); }
  // Stops and joins, then retires each worker as a reply channel: a handler may still hold a
  // reply that points at it.
  void Shutdown();

 private:
  std::atomic<bool> stopping_{false};
  std::vector<std::unique_ptr<RingWorker>> workers_;
  WorkerThreads threads_;
};

}  // namespace ringfuse::internal
