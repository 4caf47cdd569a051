#include "transport/uring_transport.h"

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/fd.h"
#include "protocol/reply_parts.h"
#include "protocol/request_unique.h"
#include "ringfuse/log.h"
#include "ringfuse/protocol/reply_channel.h"
#include "ringfuse/reply.h"
#include "transport/dev_fuse.h"
#include "transport/dev_fuse_channel.h"
#include "transport/pause_signal.h"

namespace ringfuse::internal {
namespace {

// One read per ring unless asked: more need io-wq (see ArmRead), which costs more than it gains.
constexpr size_t kDefaultReadsInFlight = 1;

// One worker: its ring, its /dev/fuse fd, its slots. Everything but SendReply from foreign
// threads runs on the worker's own thread.
//
// Pausing, the worker reads no more: on the wake-up that brings the request it cancels the reads
// in its ring, answers any that completed with a request first, and once it has nothing left in
// flight it settles. A withdrawn request makes it read again.
class UringWorker : public RingWorker {
 public:
  UringWorker(const Shared& shared, PauseRequest& pause, size_t index, int fd, base::UniqueFd clone,
              size_t depth, size_t buffer_size)
      : RingWorker(shared, index),
        pause_(pause),
        fd_(fd),
        clone_(std::move(clone)),
        depth_(depth),
        buffer_size_(buffer_size) {}

  // The ring goes first: its reads still point at the slots' buffers.
  ~UringWorker() override { ring().Exit(); }

  absl::Status Setup() override;
  void SendReply(const ReplyTarget& target, int32_t error,
                 std::span<const ConstBytes> body) override;

 private:
  struct Slot {
    std::optional<DevFuseReadBuffer> request;
    std::vector<std::byte> reply;
    size_t reply_size = 0;  // non-zero: a reply waits to be submitted before the next read
    bool reading = false;   // its READ is queued or in the kernel
  };

  bool OnCompletion(UserData data, int result) override;
  void OnWake() override;
  void AfterCompletions() override;
  void AfterRun() override;
  void ArmRead(uint32_t slot);
  void CancelReads();
  void ReadAgain();
  bool InFlight() const;
  void Settle();
  void OnWritten(int result);
  void OnRead(uint32_t slot, int result);
  void OnRequest(uint32_t slot, size_t length);
  bool QueueReply(Slot& slot, uint64_t unique, int32_t error, std::span<const ConstBytes> body);

  size_t InflightIndex(uint32_t slot) const { return index() * depth_ + slot; }

  PauseRequest& pause_;
  bool pausing_ = false;  // pause_.asked() as of the last wake-up
  bool settled_ = false;  // counted by pause_ as having nothing in flight
  size_t writes_in_flight_ = 0;
  size_t cancels_in_flight_ = 0;
  int fd_;
  base::UniqueFd clone_;
  size_t depth_;
  size_t buffer_size_;
  std::vector<Slot> slots_;
};

absl::Status UringWorker::Setup() {
  // Each slot may have a WRITE and a READ in flight, plus the wake-up read; pausing, a WRITE and
  // a cancel.
  const unsigned entries = static_cast<unsigned>(depth_ * 2 + 2);
  if (absl::Status status = InitRing(entries, 0); !status.ok()) return status;
  UnblockPauseSignal();
  slots_.resize(depth_);
  for (Slot& slot : slots_) {
    slot.request.emplace(buffer_size_);
    slot.reply.resize(4096);
  }
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) ArmRead(slot);
  ArmWaker();
  return absl::OkStatus();
}

void UringWorker::ArmRead(uint32_t slot) {
  const bool reading = !stopping() && !pausing_;
  Slot& s = slots_[slot];
  if (s.reply_size != 0) {
    // Reply first, then read into the same slot: the link keeps the reply buffer intact until
    // the kernel has taken it, and both go in the next io_uring_enter.
    io_uring_sqe* write = ring().NextSqe();
    io_uring_prep_write(write, fd_, s.reply.data(), static_cast<unsigned>(s.reply_size), 0);
    if (reading) write->flags |= IOSQE_IO_LINK;
    io_uring_sqe_set_data64(write, EncodeUserData(Completion::kWrite, slot));
    s.reply_size = 0;
    ++writes_in_flight_;
  }
  if (!reading) return;
  io_uring_sqe* read = ring().NextSqe();
  io_uring_prep_read(read, fd_, s.request->data(), static_cast<unsigned>(s.request->size()), 0);
  // /dev/fuse ignores IOCB_NOWAIT: a read issued inline after a poll wake-up that finds the
  // queue already emptied by another reader blocks this thread inside io_uring_enter. With one
  // read per ring that is harmless (the thread has nothing else to do); with several, the
  // completions of the others are stuck behind it (a deadlock, seen here), so each read then
  // blocks in an io-wq worker instead, at the price of a thread hand-off per request.
  if (depth_ > 1) read->flags |= IOSQE_ASYNC;
  io_uring_sqe_set_data64(read, EncodeUserData(Completion::kRead, slot));
  s.reading = true;
}

void UringWorker::CancelReads() {
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
    if (!slots_[slot].reading) continue;
    io_uring_sqe* cancel = ring().NextSqe();
    io_uring_prep_cancel64(cancel, EncodeUserData(Completion::kRead, slot), 0);
    io_uring_sqe_set_data64(cancel, EncodeUserData(Completion::kCancel, slot));
    ++cancels_in_flight_;
  }
}

void UringWorker::ReadAgain() {
  if (settled_) pause_.Unsettle();
  settled_ = false;
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
    if (!slots_[slot].reading) ArmRead(slot);
  }
}

bool UringWorker::InFlight() const {
  if (writes_in_flight_ != 0 || cancels_in_flight_ != 0) return true;
  for (const Slot& slot : slots_) {
    if (slot.reading) return true;
  }
  return false;
}

void UringWorker::Settle() {
  settled_ = true;
  pause_.Settle();
}

void UringWorker::OnWake() {
  if (pause_.asked() == pausing_) return;
  pausing_ = !pausing_;
  if (pausing_) {
    CancelReads();
  } else {
    ReadAgain();
  }
}

void UringWorker::AfterCompletions() {
  if (pausing_ && !settled_ && !InFlight()) Settle();
}

void UringWorker::AfterRun() {
  // A worker that has ended reads nothing either: Pause need not wait for it.
  if (!settled_) Settle();
}

bool UringWorker::OnCompletion(UserData data, int result) {
  switch (data.kind) {
    case Completion::kRead:
      slots_[data.slot].reading = false;
      OnRead(data.slot, result);
      return true;
    case Completion::kWrite:
      --writes_in_flight_;
      OnWritten(result);
      return true;
    case Completion::kCancel:
      // 0, ENOENT (the read had completed) or EALREADY (it is being woken): either way the
      // read's own completion is what the worker waits for.
      --cancels_in_flight_;
      return true;
    default: return false;
  }
}

void UringWorker::OnWritten(int result) {
  if (result >= 0) return;
  // ENOENT: the request was interrupted or aborted; nobody waits for this answer.
  Log(result == -ENOENT ? LogLevel::kDebug : LogLevel::kWarning,
      "uring worker %u: reply not delivered: %s", index(), std::strerror(-result));
}

void UringWorker::OnRead(uint32_t slot, int result) {
  if (result >= 0) {
    OnRequest(slot, static_cast<size_t>(result));
    ArmRead(slot);
    return;
  }
  switch (-result) {
    case ENOENT:  // the request was interrupted before we read it
    case EINTR:
    case EAGAIN:
    case ECANCELED:  // the linked reply before it failed, or Pause took the read back
      ArmRead(slot);
      return;
    case ENODEV:        // unmounted
    case ECONNABORTED:  // aborted
      MarkDone();
      return;
    default:
      Log(LogLevel::kError, "uring worker %u: read from /dev/fuse failed: %s", index(),
          std::strerror(-result));
      MarkDone();
  }
}

void UringWorker::OnRequest(uint32_t slot, size_t length) {
  const ConstBytes message(slots_[slot].request->data(), length);
  Handle(slot, InflightIndex(slot), ReadUnique(message).value_or(0),
         [&](const Delivery& delivery) { dispatcher().Dispatch(message, delivery); });
}

bool UringWorker::QueueReply(Slot& slot, uint64_t unique, int32_t error,
                             std::span<const ConstBytes> body) {
  if (slot.reply_size != 0) return false;  // one reply per request; a second goes by writev
  const size_t needed = sizeof(wire::OutHeader) + PartsSize(ReplyParts(error, body));
  // Grows only past the largest reply seen so far: steady state allocates nothing.
  if (slot.reply.size() < needed) slot.reply.resize(needed);
  slot.reply_size = EncodeReplyMessage(unique, error, body, slot.reply);
  return slot.reply_size != 0;
}

void UringWorker::SendReply(const ReplyTarget& target, int32_t error,
                            std::span<const ConstBytes> body) {
  if (InHandlerOf(target.slot) && QueueReply(slots_[target.slot], target.unique, error, body)) {
    return;
  }
  // From another thread, or later: a direct write, which is thread-safe and never waits.
  const int result = WriteReply(fd_, target.unique, error, body);
  if (result != 0) {
    Log(result == ENOENT ? LogLevel::kDebug : LogLevel::kWarning,
        "reply to unique %u not delivered: %s", target.unique, std::strerror(result));
  }
}

}  // namespace

UringTransport::UringTransport(const TransportContext& context)
    : context_(context),
      worker_count_(WorkerCount(context.options)),
      depth_(context.options.queue_depth > 0 ? static_cast<size_t>(context.options.queue_depth)
                                             : kDefaultReadsInFlight),
      buffer_size_(DevFuseReadBufferSize(context.negotiated)),
      inflight_(worker_count_ * depth_) {}

absl::Status UringTransport::Start() {
  const RingWorker::Shared shared{"uring worker", context_.dispatcher, inflight_,
                                  workers_.stopping()};
  InstallPauseSignal();
  for (size_t i = 0; i < worker_count_; ++i) {
    base::UniqueFd clone;
    if (i > 0 && context_.options.clone_fds) {
      absl::StatusOr<base::UniqueFd> cloned = CloneDevFuse(context_.session_fd);
      if (!cloned.ok()) return cloned.status();
      clone = std::move(*cloned);
    }
    const int fd = clone.valid() ? clone.get() : context_.session_fd;
    absl::Status added = workers_.Add(std::make_unique<UringWorker>(
        shared, pause_, i, fd, std::move(clone), depth_, buffer_size_));
    if (!added.ok()) return added;
  }
  return workers_.Start();
}

absl::Status UringTransport::Pause(absl::Duration bound) {
  pause_.Ask();
  // The wake-up brings the request. A worker whose read blocks inside its own io_uring_enter
  // (see ArmRead: several rings woken for one request, and this one lost) sees no completion
  // until that read ends: from the second nudge on, a signal ends it. Not at once, so that a
  // handler busy for a moment is not interrupted for nothing.
  const bool settled = pause_.WaitUntilSettled(worker_count_, bound, [this, nudges = 0]() mutable {
    workers_.WakeAll();
    if (nudges++ > 0) workers_.Signal(PauseSignal());
  });
  if (!settled) {
    const size_t busy = worker_count_ - pause_.settled();
    pause_.Withdraw();
    workers_.WakeAll();
    return absl::DeadlineExceededError(absl::StrFormat(
        "the uring transport did not stop reading within %s (%u of %u rings still had a read or "
        "a request in hand): it serves on",
        absl::FormatDuration(bound), busy, worker_count_));
  }
  workers_.Stop();
  workers_.Join();
  return absl::OkStatus();
}

std::string UringTransport::Describe() const {
  return absl::StrFormat("%u rings x %u reads in flight x %.1f KiB buffer", worker_count_, depth_,
                         buffer_size_ / 1024.0);
}

}  // namespace ringfuse::internal
