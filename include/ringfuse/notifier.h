/// \file
/// Notifications from the server to the kernel, all nine of them.
///
/// The kernel accepts notifications only as writes to /dev/fuse, whatever carries the requests.
/// Three ways to send:
/// - Synchronous (InvalEntry, IncEpoch, ...): returns the kernel's answer, e.g. NotFound when the
///   inode or name is not cached. Use from any thread that is NOT handling a request.
/// - Queued (Queue): copies the notification and returns at once; a background thread sends it
///   and reports the answer to a callback. Use from inside handlers: the kernel may hold a lock
///   that the notification needs (INVAL_ENTRY or DELETE on the directory whose operation is being
///   handled) while it waits for the very reply the handler has not sent yet, so a synchronous
///   notification there can deadlock.
/// - Batched (SendBatch): many notifications in one io_uring submission, one answer each.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ringfuse/export.h"
#include "ringfuse/init.h"
#include "ringfuse/notify.h"
#include "ringfuse/observer.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// Sends notifications on one connection, in the three ways above. Each synchronous call fails
/// with FailedPrecondition when the kernel's protocol minor predates the notification.
class Notifier : public NotifyReplySink {
 public:
  /// Writes to `dev_fd` (not owned) for a connection that agreed `negotiated`.
  Notifier(int dev_fd, const Negotiated& negotiated);
  /// Sends what is queued, then stops the sender thread.
  ~Notifier() override;

  /// Writes one encoded notification and returns the kernel's answer.
  absl::Status Send(const Notification& notification);

  /// Notification::InvalInode, sent: by default attributes only.
  absl::Status InvalInode(uint64_t nodeid, int64_t offset = -1, int64_t length = 0);
  /// Notification::InvalEntry, sent; `expire_only` sets wire::kExpireOnly.
  absl::Status InvalEntry(uint64_t parent, std::string_view name, bool expire_only = false);
  /// Notification::Delete, sent.
  absl::Status Delete(uint64_t parent, uint64_t child, std::string_view name);
  /// Notification::Store, sent.
  absl::Status Store(uint64_t nodeid, uint64_t offset, ConstBytes data);
  /// Notification::Poll, sent.
  absl::Status Poll(uint64_t kernel_handle);
  /// Notification::Resend, sent.
  absl::Status Resend();
  /// Notification::IncEpoch, sent.
  absl::Status IncEpoch();
  /// Notification::Prune, sent.
  absl::Status Prune(std::span<const uint64_t> nodeids);
  /// Asks for the kernel's cached pages of `nodeid` and waits for them (NOTIFY_REPLY). May return
  /// fewer bytes than asked, as many as are cached contiguously from `offset`.
  absl::StatusOr<std::vector<std::byte>> Retrieve(uint64_t nodeid, uint64_t offset, uint32_t size,
                                                  absl::Duration timeout = absl::Seconds(5));

  /// Told the kernel's answer to a queued notification, on the sender thread.
  using Done = std::function<void(absl::Status)>;
  /// Copies `notification` and returns at once; the sender thread sends it, then calls `done`.
  void Queue(const Notification& notification, Done done = {});
  /// Waits until everything queued so far has been sent.
  void Flush();

  /// Sends all of them in one io_uring submission; one answer each, in order.
  std::vector<absl::Status> SendBatch(std::span<const Notification> notifications);

  /// Hands the data to the Retrieve waiting for `notify_unique`.
  void OnNotifyReply(uint64_t notify_unique, const op::NotifyReply& reply) override;

 private:
  struct State;  // the ring, the queue and its sender thread, RETRIEVE's waiters

  absl::Status CheckSupported(wire::NotifyCode code) const;
  absl::Status Answer(wire::NotifyCode code, int result, size_t expected) const;
  void SendQueued();
  void Submit(std::span<const std::vector<iovec>> messages, std::span<int> results);

  const int dev_fd_;
  const uint32_t kernel_minor_;
  std::unique_ptr<State> state_;
};

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
