// The thread that answers INIT while mount() waits for it (FUSE_DEV_IOC_SYNC_INIT, Linux 6.18).
//
// With sync_init the kernel sends INIT from inside mount() and returns only once it is answered,
// so that a refused INIT fails the mount itself. Until the mount attaches the fd, a read() (and a
// poll()) of it sleeps in the kernel, and stays asleep when the mount fails before sending INIT:
// only a signal ends that sleep, so the thread is cancelled (pthread_cancel) then.
#pragma once

#include <pthread.h>

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "base/fd.h"
#include "ringfuse/bytes.h"

namespace ringfuse::internal {

class SyncInitThread {
 public:
  // Starts the thread, which waits for Serve. `answer` is called on it with the message read.
  static absl::StatusOr<std::unique_ptr<SyncInitThread>> Start(
      std::function<void(ConstBytes message)> answer);
  // Joins, as Join(false) does, if not joined yet.
  ~SyncInitThread();

  // From Mount::Create's before_mount: the thread reads INIT from `dev_fd`, then answers it.
  void Serve(int dev_fd);
  // Once mount() has returned: joins the thread. Unless `mounted`, INIT may never come, and the
  // thread is cancelled where it waits. Returns whether INIT was read and answered.
  bool Join(bool mounted);

 private:
  explicit SyncInitThread(std::function<void(ConstBytes)> answer);
  static void* Run(void* self);
  void ReadAndAnswer();

  std::function<void(ConstBytes)> answer_;
  base::UniqueFd handoff_read_, handoff_write_;  // carries the fd from Serve to the thread
  pthread_t thread_{};
  bool joinable_ = false;
  bool answered_ = false;  // written by the thread before it ends, read after the join
};

}  // namespace ringfuse::internal
