#include "transport/sync_init_thread.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/errno_status.h"
#include "ringfuse/wire.h"
#include "transport/log.h"

namespace ringfuse::internal {
namespace {

// read() that goes on after signals the process takes: mount() waits for INIT whatever happens
// here. Still a cancellation point.
ssize_t ReadRetrying(int fd, void* buffer, size_t size) {
  ssize_t length;
  do {
    length = ::read(fd, buffer, size);
  } while (length < 0 && errno == EINTR);
  return length;
}

}  // namespace

SyncInitThread::SyncInitThread(std::function<void(ConstBytes)> answer)
    : answer_(std::move(answer)) {}

absl::StatusOr<std::unique_ptr<SyncInitThread>> SyncInitThread::Start(
    std::function<void(ConstBytes message)> answer) {
  std::unique_ptr<SyncInitThread> thread(new SyncInitThread(std::move(answer)));
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    return base::ErrnoStatus(errno, "cannot create the pipe to the INIT thread");
  }
  thread->handoff_read_.reset(ends[0]);
  thread->handoff_write_.reset(ends[1]);
  // A raw pthread: std::thread's entry would swallow the cancellation's unwinding.
  if (const int error = ::pthread_create(&thread->thread_, nullptr, &Run, thread.get());
      error != 0) {
    return base::ErrnoStatus(error, "cannot start the thread that answers INIT");
  }
  thread->joinable_ = true;
  return thread;
}

SyncInitThread::~SyncInitThread() {
  if (joinable_) Join(/*mounted=*/false);
}

void* SyncInitThread::Run(void* self) {
  static_cast<SyncInitThread*>(self)->ReadAndAnswer();
  return nullptr;
}

void SyncInitThread::ReadAndAnswer() {
  int dev_fd = -1;
  if (ReadRetrying(handoff_read_.get(), &dev_fd, sizeof(dev_fd)) != sizeof(dev_fd)) return;
  // INIT is small, but the kernel refuses reads shorter than its minimum buffer.
  std::vector<std::byte> buffer(wire::kMinReadBuffer * 2);
  const ssize_t length = ReadRetrying(dev_fd, buffer.data(), buffer.size());
  // Read: the kernel waits for the answer, which must be sent whole.
  int ignored;
  ::pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &ignored);
  if (length < 0) {
    Log(LogLevel::kWarning, "reading INIT from /dev/fuse failed: %s", std::strerror(errno));
    return;
  }
  answer_(ConstBytes(buffer.data(), static_cast<size_t>(length)));
  answered_ = true;
}

void SyncInitThread::Serve(int dev_fd) {
  if (::write(handoff_write_.get(), &dev_fd, sizeof(dev_fd)) != sizeof(dev_fd)) {
    Log(LogLevel::kWarning, "cannot hand the /dev/fuse fd to the INIT thread: %s",
        std::strerror(errno));
  }
}

bool SyncInitThread::Join(bool mounted) {
  if (!joinable_) return answered_;
  if (!mounted) ::pthread_cancel(thread_);  // no effect once INIT is read: cancelling is off then
  ::pthread_join(thread_, nullptr);
  joinable_ = false;
  return answered_;
}

}  // namespace ringfuse::internal
