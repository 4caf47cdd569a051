// Wakes a thread waiting on its ring from any other thread: an eventfd whose read sits in the
// ring and completes as Completion::kWake once Wake() writes to it.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "base/errno_status.h"
#include "base/fd.h"
#include "transport/ring.h"
#include "transport/user_data.h"

namespace ringfuse::internal {

class RingWaker {
 public:
  absl::Status Open() {
    fd_.reset(::eventfd(0, EFD_CLOEXEC));
    return fd_.valid() ? absl::OkStatus() : base::ErrnoStatus(errno, "eventfd");
  }

  // Queues the read that a Wake() completes; call again after each kWake completion.
  void Arm(Ring& ring) {
    io_uring_sqe* sqe = ring.NextSqe();
    io_uring_prep_read(sqe, fd_.get(), &buffer_, sizeof(buffer_), 0);
    io_uring_sqe_set_data64(sqe, EncodeUserData(Completion::kWake, 0));
  }

  // Any thread. Before Open() or Arm() it is remembered by the eventfd's counter.
  void Wake() {
    const uint64_t one = 1;
    (void)!::write(fd_.get(), &one, sizeof(one));
  }

 private:
  base::UniqueFd fd_;
  uint64_t buffer_ = 0;
};

}  // namespace ringfuse::internal
