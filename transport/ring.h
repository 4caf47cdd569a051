// A thin RAII wrapper over a liburing ring. Functions return absl::Status or -errno as liburing
// does; nothing here touches errno. Every SQE handed out is zeroed in full (128 bytes on SQE128
// rings), because io_uring_get_sqe does not clear it and leftovers make commands fail.
#pragma once

#include <liburing.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/errno_status.h"

namespace ringfuse::internal {

class Ring {
 public:
  Ring() = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring() { Exit(); }

  // Ends the ring now: the kernel cancels the operations still in flight. For owners whose
  // buffers those operations point at, before the buffers go.
  void Exit() {
    if (initialized_) io_uring_queue_exit(&ring_);
    initialized_ = false;
  }

  // `flags` are IORING_SETUP_*. Call from the thread that will submit when using
  // IORING_SETUP_SINGLE_ISSUER. `completions`, if not 0, sizes the completion queue (by default
  // twice `entries`) for rings that may have more operations in flight than that.
  absl::Status Init(unsigned entries, unsigned flags, unsigned completions = 0) {
    io_uring_params params{};
    params.flags = flags;
    if (completions != 0) {
      params.flags |= IORING_SETUP_CQSIZE;
      params.cq_entries = completions;
    }
    const int result = io_uring_queue_init_params(entries, &ring_, &params);
    if (result < 0) {
      return base::ErrnoStatus(
          -result, absl::StrFormat("io_uring_queue_init(%u entries, flags 0x%x)", entries, flags));
    }
    initialized_ = true;
    sqe_size_ = (flags & IORING_SETUP_SQE128) ? 128 : 64;
    return absl::OkStatus();
  }

  // A zeroed SQE, submitting what is queued first if the SQ is full; null only if even that fails.
  io_uring_sqe* NextSqe() {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {
      io_uring_submit(&ring_);
      sqe = io_uring_get_sqe(&ring_);
    }
    if (sqe != nullptr) std::memset(sqe, 0, sqe_size_);
    return sqe;
  }

  // Submits everything queued and waits for at least `wait` completions; -errno on failure.
  int SubmitAndWait(unsigned wait) { return io_uring_submit_and_wait(&ring_, wait); }

  // The same, waiting at most `nanoseconds`: -ETIME when that passes with no completion.
  int SubmitAndWaitFor(long nanoseconds) {
    __kernel_timespec timeout{0, nanoseconds};
    io_uring_cqe* cqe = nullptr;
    return io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &timeout, nullptr);
  }

  // Calls `handle(cqe)` for every completion available, then marks them seen.
  template <typename Handle>
  unsigned DrainCompletions(Handle&& handle) {
    unsigned head;
    unsigned count = 0;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      handle(*cqe);
      ++count;
    }
    io_uring_cq_advance(&ring_, count);
    return count;
  }

  // Calls `look(cqe)` for every completion available without marking any of them seen.
  template <typename Look>
  void PeekCompletions(Look&& look) {
    unsigned head;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(&ring_, head, cqe) { look(*cqe); }
  }

  io_uring* raw() { return &ring_; }

 private:
  io_uring ring_{};
  bool initialized_ = false;
  size_t sqe_size_ = 64;
};

}  // namespace ringfuse::internal
