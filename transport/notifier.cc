#include "transport/notifier.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "transport/errno_status.h"
#include "transport/log.h"

namespace ringfuse {
namespace {

// Notify uniques live far above the kernel's request uniques (a counter from 0 in steps of 2),
// keep bit 0 clear (it marks INTERRUPT) and bit 63 clear (it marks RESEND).
constexpr uint64_t kFirstNotifyUnique = uint64_t{1} << 62;
constexpr unsigned kRingEntries = 256;

std::vector<iovec> ToIovecs(const Notification& notification) {
  std::array<ConstBytes, Notification::kMaxParts> parts;
  const size_t count = notification.Gather(parts);
  std::vector<iovec> iovecs;
  for (size_t i = 0; i < count; ++i) {
    iovecs.push_back({const_cast<std::byte*>(parts[i].data()), parts[i].size()});
  }
  return iovecs;
}

}  // namespace

Notifier::Notifier(int dev_fd, const Negotiated& negotiated)
    : dev_fd_(dev_fd),
      kernel_minor_(negotiated.kernel_minor),
      next_notify_unique_(kFirstNotifyUnique) {
  sender_ = std::thread(&Notifier::SendQueued, this);
}

Notifier::~Notifier() {
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  queue_changed_.notify_all();
  sender_.join();
}

absl::Status Notifier::CheckSupported(abi::NotifyCode code) const {
  const uint32_t needed = NotifyMinimumMinor(code);
  if (kernel_minor_ >= needed) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrFormat("%s notifications need FUSE protocol 7.%u; this kernel speaks 7.%u",
                      NotifyCodeName(code), needed, kernel_minor_));
}

absl::Status Notifier::Answer(abi::NotifyCode code, int result, size_t expected) const {
  if (result == static_cast<int>(expected)) return absl::OkStatus();
  if (result >= 0) {
    return absl::DataLossError(absl::StrFormat("%s: the kernel took %d of %u bytes",
                                               NotifyCodeName(code), result, expected));
  }
  const char* meaning = result == -ENOENT ? " (not cached by the kernel)" : "";
  return ErrnoStatus(-result, absl::StrFormat("%s notification%s", NotifyCodeName(code), meaning));
}

absl::Status Notifier::Send(const Notification& notification) {
  if (absl::Status status = CheckSupported(notification.code()); !status.ok()) return status;
  const std::vector<iovec> iovecs = ToIovecs(notification);
  ssize_t written;
  do {
    written = ::writev(dev_fd_, iovecs.data(), static_cast<int>(iovecs.size()));
  } while (written < 0 && errno == EINTR);
  return Answer(notification.code(), written < 0 ? -errno : static_cast<int>(written),
                notification.size());
}

absl::Status Notifier::InvalInode(uint64_t nodeid, int64_t offset, int64_t length) {
  return Send(EncodeNotifyInvalInode(nodeid, offset, length));
}

absl::Status Notifier::InvalEntry(uint64_t parent, std::string_view name, bool expire_only) {
  if (expire_only && kernel_minor_ < 38) {
    return absl::FailedPreconditionError("expire-only INVAL_ENTRY needs FUSE protocol 7.38");
  }
  absl::StatusOr<Notification> n =
      EncodeNotifyInvalEntry(parent, name, expire_only ? abi::kExpireOnly : 0);
  return n.ok() ? Send(*n) : n.status();
}

absl::Status Notifier::Delete(uint64_t parent, uint64_t child, std::string_view name) {
  absl::StatusOr<Notification> n = EncodeNotifyDelete(parent, child, name);
  return n.ok() ? Send(*n) : n.status();
}

absl::Status Notifier::Store(uint64_t nodeid, uint64_t offset, ConstBytes data) {
  absl::StatusOr<Notification> n = EncodeNotifyStore(nodeid, offset, data);
  return n.ok() ? Send(*n) : n.status();
}

absl::Status Notifier::Poll(uint64_t kernel_handle) {
  return Send(EncodeNotifyPoll(kernel_handle));
}

absl::Status Notifier::Resend() { return Send(EncodeNotifyResend()); }

absl::Status Notifier::IncEpoch() { return Send(EncodeNotifyIncEpoch()); }

absl::Status Notifier::Prune(std::span<const uint64_t> nodeids) {
  absl::StatusOr<Notification> n = EncodeNotifyPrune(nodeids);
  return n.ok() ? Send(*n) : n.status();
}

absl::StatusOr<std::vector<std::byte>> Notifier::Retrieve(uint64_t nodeid, uint64_t offset,
                                                          uint32_t size, absl::Duration timeout) {
  uint64_t unique;
  {
    std::lock_guard lock(retrieve_mutex_);
    unique = next_notify_unique_;
    next_notify_unique_ += 2;
    waiters_[unique];
  }
  absl::Status sent = Send(EncodeNotifyRetrieve(unique, nodeid, offset, size));
  std::unique_lock lock(retrieve_mutex_);
  if (sent.ok()) {
    retrieve_answered_.wait_for(lock, absl::ToChronoMilliseconds(timeout),
                                [&] { return waiters_[unique].answered; });
  }
  Waiter waiter = std::move(waiters_[unique]);
  waiters_.erase(unique);
  if (!sent.ok()) return sent;
  if (!waiter.answered) {
    return absl::DeadlineExceededError(
        absl::StrFormat("no NOTIFY_REPLY for RETRIEVE of node %u within %s", nodeid,
                        absl::FormatDuration(timeout)));
  }
  return std::move(waiter.data);
}

void Notifier::OnNotifyReply(uint64_t notify_unique, const op::NotifyReply& reply) {
  {
    std::lock_guard lock(retrieve_mutex_);
    auto waiter = waiters_.find(notify_unique);
    if (waiter == waiters_.end()) return;  // the caller gave up waiting
    waiter->second.data.assign(reply.data.begin(), reply.data.end());
    waiter->second.answered = true;
  }
  retrieve_answered_.notify_all();
}

void Notifier::Queue(const Notification& notification, Done done) {
  Queued queued{notification.code(), std::vector<std::byte>(notification.size()), std::move(done)};
  notification.CopyTo(queued.bytes);
  {
    std::lock_guard lock(queue_mutex_);
    queue_.push_back(std::move(queued));
  }
  queue_changed_.notify_all();
}

void Notifier::Flush() {
  std::unique_lock lock(queue_mutex_);
  queue_changed_.wait(lock, [this] { return queue_.empty() && in_progress_ == 0; });
}

// The background sender: everything queued since the last round goes out in one submission.
void Notifier::SendQueued() {
  std::unique_lock lock(queue_mutex_);
  for (;;) {
    queue_changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to send
    std::vector<Queued> round(std::make_move_iterator(queue_.begin()),
                              std::make_move_iterator(queue_.end()));
    queue_.clear();
    in_progress_ = round.size();
    lock.unlock();

    std::vector<std::vector<iovec>> messages;
    for (Queued& q : round) messages.push_back({{q.bytes.data(), q.bytes.size()}});
    std::vector<int> results(round.size());
    Submit(messages, results);
    for (size_t i = 0; i < round.size(); ++i) {
      absl::Status status = CheckSupported(round[i].code);
      if (status.ok()) status = Answer(round[i].code, results[i], round[i].bytes.size());
      if (round[i].done) {
        round[i].done(status);
      } else if (!status.ok()) {
        Log(LogLevel::kWarning, "queued %s", status.ToString());
      }
    }

    lock.lock();
    in_progress_ = 0;
    queue_changed_.notify_all();
  }
}

std::vector<absl::Status> Notifier::SendBatch(std::span<const Notification> notifications) {
  std::vector<absl::Status> statuses(notifications.size());
  std::vector<std::vector<iovec>> messages;
  std::vector<size_t> sent;  // indices of the notifications actually submitted
  for (size_t i = 0; i < notifications.size(); ++i) {
    statuses[i] = CheckSupported(notifications[i].code());
    if (!statuses[i].ok()) continue;
    messages.push_back(ToIovecs(notifications[i]));
    sent.push_back(i);
  }
  std::vector<int> results(messages.size());
  Submit(messages, results);
  for (size_t j = 0; j < sent.size(); ++j) {
    const Notification& n = notifications[sent[j]];
    statuses[sent[j]] = Answer(n.code(), results[j], n.size());
  }
  return statuses;
}

// Writes every message with one WRITEV each, kRingEntries per io_uring submission; results[i]
// is the byte count or -errno of messages[i]. Falls back to writev() if no ring can be had.
void Notifier::Submit(std::span<const std::vector<iovec>> messages, std::span<int> results) {
  std::lock_guard lock(ring_mutex_);
  if (!ring_ready_) ring_ready_ = ring_.Init(kRingEntries, 0).ok();
  for (size_t start = 0; start < messages.size(); start += kRingEntries) {
    const size_t end = std::min(messages.size(), start + kRingEntries);
    if (!ring_ready_) {
      for (size_t i = start; i < end; ++i) {
        const ssize_t w =
            ::writev(dev_fd_, messages[i].data(), static_cast<int>(messages[i].size()));
        results[i] = w < 0 ? -errno : static_cast<int>(w);
      }
      continue;
    }
    for (size_t i = start; i < end; ++i) {
      io_uring_sqe* sqe = ring_.NextSqe();
      io_uring_prep_writev(sqe, dev_fd_, messages[i].data(),
                           static_cast<unsigned>(messages[i].size()), 0);
      io_uring_sqe_set_data64(sqe, i);
    }
    size_t completed = 0;
    while (completed < end - start) {
      const int result = ring_.SubmitAndWait(1);
      if (result < 0 && result != -EINTR && result != -EAGAIN && result != -EBUSY) break;
      completed += ring_.DrainCompletions([&](const io_uring_cqe& cqe) {
        if (cqe.user_data < results.size()) results[cqe.user_data] = cqe.res;
      });
    }
  }
}

}  // namespace ringfuse
