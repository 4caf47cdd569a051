// Notifications from the server to the kernel, all nine of them.
//
// The kernel accepts notifications only as writes to /dev/fuse, whatever carries the requests.
// Three ways to send:
// - Synchronous (InvalEntry, IncEpoch, ...): returns the kernel's answer, e.g. NotFound when the
//   inode or name is not cached. Use from any thread that is NOT handling a request.
// - Queued (Queue): copies the notification and returns at once; a background thread sends it
//   and reports the answer to a callback. Use from inside handlers: the kernel may hold a lock
//   that the notification needs (INVAL_ENTRY or DELETE on the directory whose operation is being
//   handled) while it waits for the very reply the handler has not sent yet, so a synchronous
//   notification there can deadlock.
// - Batched (SendBatch): many notifications in one io_uring submission, one answer each.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "protocol/dispatcher.h"
#include "protocol/init.h"
#include "protocol/notify.h"
#include "transport/ring.h"

namespace ringfuse {

class Notifier : public NotifyReplySink {
 public:
  Notifier(int dev_fd, const Negotiated& negotiated);
  ~Notifier() override;

  absl::Status Send(const Notification& notification);

  absl::Status InvalInode(uint64_t nodeid, int64_t offset = -1, int64_t length = 0);
  absl::Status InvalEntry(uint64_t parent, std::string_view name, bool expire_only = false);
  absl::Status Delete(uint64_t parent, uint64_t child, std::string_view name);
  absl::Status Store(uint64_t nodeid, uint64_t offset, ConstBytes data);
  absl::Status Poll(uint64_t kernel_handle);
  absl::Status Resend();
  absl::Status IncEpoch();
  absl::Status Prune(std::span<const uint64_t> nodeids);
  // Asks for the kernel's cached pages of `nodeid` and waits for them (NOTIFY_REPLY). May return
  // fewer bytes than asked, as many as are cached contiguously from `offset`.
  absl::StatusOr<std::vector<std::byte>> Retrieve(uint64_t nodeid, uint64_t offset, uint32_t size,
                                                  absl::Duration timeout = absl::Seconds(5));

  using Done = std::function<void(absl::Status)>;
  void Queue(const Notification& notification, Done done = {});
  // Waits until everything queued so far has been sent.
  void Flush();

  std::vector<absl::Status> SendBatch(std::span<const Notification> notifications);

  void OnNotifyReply(uint64_t notify_unique, const op::NotifyReply& reply) override;

 private:
  struct Queued {
    abi::NotifyCode code;
    std::vector<std::byte> bytes;
    Done done;
  };
  struct Waiter {
    bool answered = false;
    std::vector<std::byte> data;
  };

  absl::Status CheckSupported(abi::NotifyCode code) const;
  absl::Status Answer(abi::NotifyCode code, int result, size_t expected) const;
  void SendQueued();
  void Submit(std::span<const std::vector<iovec>> messages, std::span<int> results);

  const int dev_fd_;
  const uint32_t kernel_minor_;

  std::mutex ring_mutex_;
  Ring ring_;
  bool ring_ready_ = false;

  std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::deque<Queued> queue_;
  size_t in_progress_ = 0;
  bool stopping_ = false;
  std::thread sender_;

  std::mutex retrieve_mutex_;
  std::condition_variable retrieve_answered_;
  uint64_t next_notify_unique_;
  std::map<uint64_t, Waiter> waiters_;
};

}  // namespace ringfuse
