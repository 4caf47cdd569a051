#include "transport/ring_worker.h"

#include <cerrno>
#include <cstring>

#include "ringfuse/log.h"
#include "transport/retire_channel.h"

namespace ringfuse::internal {
namespace {

// io_uring_enter results that end nothing: a signal (EINTR), or no room to post completions
// until the worker reaps the ones waiting (EAGAIN, EBUSY), which the next round does.
bool Transient(int result) { return result == -EINTR || result == -EAGAIN || result == -EBUSY; }

}  // namespace

absl::Status RingWorker::InitRing(unsigned entries, unsigned flags, unsigned completions) {
  // SINGLE_ISSUER with DEFER_TASKRUN runs completion work only when this thread enters the
  // kernel to wait, instead of interrupting it with task work whenever one completes.
  const unsigned cheapest = flags | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  absl::Status status = ring_.Init(entries, cheapest, completions);
  if (status.ok()) return status;
  return ring_.Init(entries, flags, completions);
}

void RingWorker::Run() {
  while (!done_) {
    const int result = Wait();
    if (result == -ETIME) {
      OnWaitTimeout();
      continue;
    }
    if (result < 0 && !Transient(result)) {
      Log(LogLevel::kError, "%s %u: io_uring_enter failed: %s", shared_.name, index_,
          std::strerror(-result));
      break;
    }
    ring_.DrainCompletions([this](const io_uring_cqe& cqe) { Complete(cqe); });
    AfterCompletions();
  }
  // What the last completions queued (replies, above all) still goes to the kernel.
  ring_.SubmitAndWait(0);
  AfterRun();
}

void RingWorker::Complete(const io_uring_cqe& cqe) {
  const UserData data = DecodeUserData(cqe.user_data);
  if (data.kind != Completion::kWake) {
    if (!OnCompletion(data, cqe.res)) {
      Log(LogLevel::kError, "%s %u: completion with unknown user_data 0x%x", shared_.name, index_,
          cqe.user_data);
    }
    return;
  }
  OnWake();
  if (stopping()) {
    done_ = true;
  } else {
    waker_.Arm(ring_);
  }
}

absl::Status RingWorkers::Add(std::unique_ptr<RingWorker> worker) {
  if (absl::Status status = worker->OpenWaker(); !status.ok()) return status;
  workers_.push_back(std::move(worker));
  return absl::OkStatus();
}

absl::Status RingWorkers::Start(std::function<void()> companion) {
  const size_t count = workers_.size();
  absl::Status status = threads_.Start(
      count + (companion ? 1 : 0),
      [this, count](size_t i) { return i < count ? workers_[i]->Setup() : absl::OkStatus(); },
      [this, count, companion](size_t i) {
        if (i < count) return workers_[i]->Run();
        companion();
      });
  if (!status.ok()) Stop();
  return status;
}

void RingWorkers::Stop() {
  stopping_.store(true, std::memory_order_relaxed);
  WakeAll();
}

void RingWorkers::WakeAll() {
  for (auto& worker : workers_) worker->Wake();
}

void RingWorkers::Shutdown() {
  Stop();
  Join();
  for (auto& worker : workers_) RetireChannel(std::move(worker));
  workers_.clear();
}

}  // namespace ringfuse::internal
