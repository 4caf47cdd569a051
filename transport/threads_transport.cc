#include "transport/threads_transport.h"

#include <chrono>
#include <thread>

#include "absl/strings/str_format.h"
#include "transport/dev_fuse.h"
#include "transport/dev_fuse_reader.h"
#include "transport/pause_signal.h"
#include "transport/retire_channel.h"

namespace ringfuse::internal {

ThreadsTransport::ThreadsTransport(const TransportContext& context)
    : context_(context),
      worker_count_(WorkerCount(context.options)),
      buffer_size_(DevFuseReadBufferSize(context.negotiated)),
      inflight_(worker_count_) {}

ThreadsTransport::~ThreadsTransport() {
  Stop();
  Join();
  for (auto& channel : channels_) RetireChannel(std::move(channel));
}

absl::Status ThreadsTransport::Start() {
  fds_.push_back(context_.session_fd);
  for (size_t i = 1; i < worker_count_; ++i) {
    if (!context_.options.clone_fds) {
      fds_.push_back(context_.session_fd);
      continue;
    }
    absl::StatusOr<base::UniqueFd> clone = CloneDevFuse(context_.session_fd);
    if (!clone.ok()) return clone.status();
    fds_.push_back(clone->get());
    clones_.push_back(std::move(*clone));
  }
  for (int fd : fds_) channels_.push_back(std::make_unique<DevFuseReplyChannel>(fd));
  InstallPauseSignal();
  running_ = worker_count_;
  return threads_.Start(
      worker_count_,
      [](size_t) {
        UnblockPauseSignal();
        return absl::OkStatus();
      },
      [this](size_t i) {
        DevFuseReader{fds_[i], buffer_size_, context_.dispatcher, *channels_[i], 0, inflight_, i}
            .Run(stopping_);
        running_.fetch_sub(1);
      });
}

absl::Status ThreadsTransport::Pause(absl::Duration) {
  stopping_.store(true, std::memory_order_relaxed);
  // Again and again: a signal that lands just before a worker enters read() wakes nothing.
  while (running_.load() > 0) {
    threads_.Signal(PauseSignal());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  threads_.Join();
  return absl::OkStatus();
}

std::string ThreadsTransport::Describe() const {
  return absl::StrFormat("%u threads x %.1f KiB read buffer", worker_count_, buffer_size_ / 1024.0);
}

}  // namespace ringfuse::internal
