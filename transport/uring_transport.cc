#include "transport/uring_transport.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/strings/str_format.h"
#include "ringfuse/log.h"
#include "ringfuse/reply.h"
#include "transport/dev_fuse.h"
#include "transport/dev_fuse_channel.h"
#include "transport/fd.h"
#include "transport/retire_channel.h"
#include "transport/ring.h"
#include "transport/ring_waker.h"
#include "transport/user_data.h"

namespace ringfuse {

// One read per ring unless asked: more need io-wq (see ArmRead), which costs more than it gains.
constexpr size_t kDefaultReadsInFlight = 1;

// Tries the cheapest ring flags first; older kernels reject DEFER_TASKRUN (6.1+).
absl::Status InitWorkerRing(Ring& ring, unsigned entries) {
  absl::Status status = ring.Init(entries, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
  if (status.ok()) return status;
  return ring.Init(entries, 0);
}

// One worker: its ring, its /dev/fuse fd, its slots. Everything but SendReply from foreign
// threads runs on the worker's own thread.
class UringWorker : public ReplyChannel {
 public:
  UringWorker(UringTransport& transport, size_t index, int fd, UniqueFd clone)
      : transport_(transport), index_(index), fd_(fd), clone_(std::move(clone)) {}

  absl::Status Setup();
  void Run();
  void Wake() { waker_.Wake(); }

  void SendReply(const ReplyTarget& target, int32_t error,
                 std::span<const ConstBytes> body) override;

 private:
  struct Slot {
    std::optional<DevFuseReadBuffer> request;
    std::vector<std::byte> reply;
    size_t reply_size = 0;  // non-zero: a reply waits to be submitted before the next read
  };

  void ArmRead(uint32_t slot);
  void OnCompletion(const io_uring_cqe& cqe);
  void OnRead(uint32_t slot, int result);
  void OnRequest(uint32_t slot, size_t length);
  bool QueueReply(Slot& slot, uint64_t unique, int32_t error, std::span<const ConstBytes> body);

  size_t InflightIndex(uint32_t slot) const { return index_ * transport_.depth_ + slot; }

  // The slot whose handler is running on this thread, for SendReply to recognise its own.
  static thread_local UringWorker* current_worker_;
  static thread_local uint32_t current_slot_;

  UringTransport& transport_;
  size_t index_;
  int fd_;
  UniqueFd clone_;
  RingWaker waker_;
  Ring ring_;
  std::vector<Slot> slots_;
  bool done_ = false;
};

thread_local UringWorker* UringWorker::current_worker_ = nullptr;
thread_local uint32_t UringWorker::current_slot_ = 0;

absl::Status UringWorker::Setup() {
  if (absl::Status status = waker_.Open(); !status.ok()) return status;
  // Each slot may have a WRITE and a READ in flight, plus the wake-up read.
  const unsigned entries = static_cast<unsigned>(transport_.depth_ * 2 + 2);
  if (absl::Status status = InitWorkerRing(ring_, entries); !status.ok()) return status;
  slots_.resize(transport_.depth_);
  for (Slot& slot : slots_) {
    slot.request.emplace(transport_.buffer_size_);
    slot.reply.resize(4096);
  }
  return absl::OkStatus();
}

void UringWorker::Run() {
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) ArmRead(slot);
  waker_.Arm(ring_);
  while (!done_) {
    const int result = ring_.SubmitAndWait(1);
    if (result < 0 && result != -EINTR) {
      Log(LogLevel::kError, "uring worker %u: io_uring_enter failed: %s", index_,
          std::strerror(-result));
      break;
    }
    ring_.DrainCompletions([this](const io_uring_cqe& cqe) { OnCompletion(cqe); });
  }
  ring_.SubmitAndWait(0);  // replies queued by the last completions still go out
}

void UringWorker::ArmRead(uint32_t slot) {
  const bool reading = !transport_.stopping_.load(std::memory_order_relaxed);
  Slot& s = slots_[slot];
  if (s.reply_size != 0) {
    // Reply first, then read into the same slot: the link keeps the reply buffer intact until
    // the kernel has taken it, and both go in the next io_uring_enter.
    io_uring_sqe* write = ring_.NextSqe();
    io_uring_prep_write(write, fd_, s.reply.data(), static_cast<unsigned>(s.reply_size), 0);
    if (reading) write->flags |= IOSQE_IO_LINK;
    io_uring_sqe_set_data64(write, EncodeUserData(Completion::kWrite, slot));
    s.reply_size = 0;
  }
  if (!reading) return;
  io_uring_sqe* read = ring_.NextSqe();
  io_uring_prep_read(read, fd_, s.request->data(), static_cast<unsigned>(s.request->size()), 0);
  // /dev/fuse ignores IOCB_NOWAIT: a read issued inline after a poll wake-up that finds the
  // queue already emptied by another reader blocks this thread inside io_uring_enter. With one
  // read per ring that is harmless (the thread has nothing else to do); with several, the
  // completions of the others are stuck behind it (a deadlock, seen here), so each read then
  // blocks in an io-wq worker instead, at the price of a thread hand-off per request.
  if (transport_.depth_ > 1) read->flags |= IOSQE_ASYNC;
  io_uring_sqe_set_data64(read, EncodeUserData(Completion::kRead, slot));
}

void UringWorker::OnCompletion(const io_uring_cqe& cqe) {
  const UserData data = DecodeUserData(cqe.user_data);
  switch (data.kind) {
    case Completion::kRead: OnRead(data.slot, cqe.res); break;
    case Completion::kWrite:
      if (cqe.res < 0) {
        // ENOENT: the request was interrupted or aborted; nobody waits for this answer.
        Log(cqe.res == -ENOENT ? LogLevel::kDebug : LogLevel::kWarning,
            "uring worker %u: reply not delivered: %s", index_, std::strerror(-cqe.res));
      }
      break;
    case Completion::kWake:
      if (transport_.stopping_.load(std::memory_order_relaxed)) {
        done_ = true;
      } else {
        waker_.Arm(ring_);
      }
      break;
    default:
      Log(LogLevel::kError, "uring worker %u: completion with unknown user_data 0x%x", index_,
          cqe.user_data);
  }
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
    case ECANCELED:  // the linked reply before it failed
      ArmRead(slot);
      return;
    case ENODEV:        // unmounted
    case ECONNABORTED:  // aborted
      done_ = true;
      return;
    default:
      Log(LogLevel::kError, "uring worker %u: read from /dev/fuse failed: %s", index_,
          std::strerror(-result));
      done_ = true;
  }
}

void UringWorker::OnRequest(uint32_t slot, size_t length) {
  const ConstBytes message(slots_[slot].request->data(), length);
  uint64_t unique = 0;
  if (length >= 16) std::memcpy(&unique, message.data() + 8, sizeof(unique));
  const std::atomic<bool>* interrupted = transport_.inflight_.Begin(InflightIndex(slot), unique);
  current_worker_ = this;
  current_slot_ = slot;
  transport_.context_.dispatcher.Dispatch(message, Delivery{this, slot, interrupted});
  current_worker_ = nullptr;
  transport_.inflight_.End(InflightIndex(slot));
}

bool UringWorker::QueueReply(Slot& slot, uint64_t unique, int32_t error,
                             std::span<const ConstBytes> body) {
  if (slot.reply_size != 0) return false;  // one reply per request; a second goes by writev
  size_t needed = sizeof(wire::OutHeader);
  if (error == 0) {
    for (ConstBytes part : body) needed += part.size();
  }
  // Grows only past the largest reply seen so far: steady state allocates nothing.
  if (slot.reply.size() < needed) slot.reply.resize(needed);
  slot.reply_size = EncodeReplyMessage(unique, error, body, slot.reply);
  return slot.reply_size != 0;
}

void UringWorker::SendReply(const ReplyTarget& target, int32_t error,
                            std::span<const ConstBytes> body) {
  const bool own_running_request = current_worker_ == this && current_slot_ == target.slot;
  if (own_running_request && QueueReply(slots_[target.slot], target.unique, error, body)) return;
  // From another thread, or later: a direct write, which is thread-safe and never waits.
  const int result = WriteReply(fd_, target.unique, error, body);
  if (result != 0) {
    Log(result == ENOENT ? LogLevel::kDebug : LogLevel::kWarning,
        "reply to unique %u not delivered: %s", target.unique, std::strerror(result));
  }
}

UringTransport::UringTransport(const TransportContext& context)
    : context_(context),
      worker_count_(WorkerCount(context.options)),
      depth_(context.options.queue_depth > 0 ? static_cast<size_t>(context.options.queue_depth)
                                             : kDefaultReadsInFlight),
      buffer_size_(DevFuseReadBufferSize(context.negotiated)),
      inflight_(worker_count_ * depth_) {}

UringTransport::~UringTransport() {
  Stop();
  Join();
  for (auto& worker : workers_) RetireChannel(std::move(worker));
}

absl::Status UringTransport::Start() {
  for (size_t i = 0; i < worker_count_; ++i) {
    UniqueFd clone;
    if (i > 0) {
      absl::StatusOr<UniqueFd> cloned = CloneDevFuse(context_.session_fd);
      if (!cloned.ok()) return cloned.status();
      clone = std::move(*cloned);
    }
    const int fd = i == 0 ? context_.session_fd : clone.get();
    workers_.push_back(std::make_unique<UringWorker>(*this, i, fd, std::move(clone)));
  }
  context_.dispatcher.set_interrupt_sink(&inflight_);
  absl::Status status = threads_.Start(
      worker_count_, [this](size_t i) { return workers_[i]->Setup(); },
      [this](size_t i) { workers_[i]->Run(); });
  if (!status.ok()) Stop();
  return status;
}

void UringTransport::Stop() {
  stopping_.store(true, std::memory_order_relaxed);
  for (auto& worker : workers_) worker->Wake();
}

std::string UringTransport::Describe() const {
  return absl::StrFormat("%u rings x %u reads in flight x %.1f KiB buffer", worker_count_, depth_,
                         buffer_size_ / 1024.0);
}

}  // namespace ringfuse
