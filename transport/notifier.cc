#include "ringfuse/notifier.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/str_format.h"
#include "base/errno_status.h"
#include "ringfuse/log.h"
#include "transport/ring.h"
#include "transport/unique_ranges.h"

namespace ringfuse {
namespace {

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

struct Notifier::State {
  struct Queued {
    wire::NotifyCode code;
    std::vector<std::byte> bytes;
    Done done;
  };
  struct Waiter {
    bool answered = false;
    std::vector<std::byte> data;
  };

  std::mutex ring_mutex;
  internal::Ring ring;
  bool ring_ready = false;

  std::mutex queue_mutex;
  std::condition_variable queue_changed;
  std::deque<Queued> queue;
  size_t in_progress = 0;
  bool stopping = false;
  std::thread sender;

  std::mutex retrieve_mutex;
  std::condition_variable retrieve_answered;
  uint64_t next_notify_unique = internal::kFirstNotifyUnique;  // unique_ranges.h
  std::map<uint64_t, Waiter> waiters;
};

Notifier::Notifier(int dev_fd, const Negotiated& negotiated)
    : dev_fd_(dev_fd), kernel_minor_(negotiated.kernel_minor), state_(std::make_unique<State>()) {
  state_->sender = std::thread(&Notifier::SendQueued, this);
}

Notifier::~Notifier() {
  {
    std::lock_guard lock(state_->queue_mutex);
    state_->stopping = true;
  }
  state_->queue_changed.notify_all();
  state_->sender.join();
}

absl::Status Notifier::CheckSupported(wire::NotifyCode code) const {
  const uint32_t needed = NotifyMinimumMinor(code);
  if (kernel_minor_ >= needed) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrFormat("%s notifications need FUSE protocol 7.%u; this kernel speaks 7.%u",
                      NotifyCodeName(code), needed, kernel_minor_));
}

absl::Status Notifier::Answer(wire::NotifyCode code, int result, size_t expected) const {
  if (result == static_cast<int>(expected)) return absl::OkStatus();
  if (result >= 0) {
    return absl::DataLossError(absl::StrFormat("%s: the kernel took %d of %u bytes",
                                               NotifyCodeName(code), result, expected));
  }
  const char* meaning = result == -ENOENT ? " (not cached by the kernel)" : "";
  return base::ErrnoStatus(-result,
                           absl::StrFormat("%s notification%s", NotifyCodeName(code), meaning));
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
  return Send(Notification::InvalInode(nodeid, offset, length));
}

absl::Status Notifier::InvalEntry(uint64_t parent, std::string_view name, bool expire_only) {
  if (expire_only && kernel_minor_ < 38) {
    return absl::FailedPreconditionError("expire-only INVAL_ENTRY needs FUSE protocol 7.38");
  }
  absl::StatusOr<Notification> n =
      Notification::InvalEntry(parent, name, expire_only ? wire::kExpireOnly : 0);
  return n.ok() ? Send(*n) : n.status();
}

absl::Status Notifier::Delete(uint64_t parent, uint64_t child, std::string_view name) {
  absl::StatusOr<Notification> n = Notification::Delete(parent, child, name);
  return n.ok() ? Send(*n) : n.status();
}

absl::Status Notifier::Store(uint64_t nodeid, uint64_t offset, ConstBytes data) {
  absl::StatusOr<Notification> n = Notification::Store(nodeid, offset, data);
  return n.ok() ? Send(*n) : n.status();
}

absl::Status Notifier::Poll(uint64_t kernel_handle) {
  return Send(Notification::Poll(kernel_handle));
}

absl::Status Notifier::Resend() { return Send(Notification::Resend()); }

absl::Status Notifier::IncEpoch() { return Send(Notification::IncEpoch()); }

absl::Status Notifier::Prune(std::span<const uint64_t> nodeids) {
  absl::StatusOr<Notification> n = Notification::Prune(nodeids);
  return n.ok() ? Send(*n) : n.status();
}

absl::StatusOr<std::vector<std::byte>> Notifier::Retrieve(uint64_t nodeid, uint64_t offset,
                                                          uint32_t size, absl::Duration timeout) {
  uint64_t unique;
  {
    std::lock_guard lock(state_->retrieve_mutex);
    unique = state_->next_notify_unique;
    state_->next_notify_unique += 2;
    state_->waiters[unique];
  }
  absl::Status sent = Send(Notification::Retrieve(unique, nodeid, offset, size));
  std::unique_lock lock(state_->retrieve_mutex);
  if (sent.ok()) {
    state_->retrieve_answered.wait_for(lock, absl::ToChronoMilliseconds(timeout),
                                       [&] { return state_->waiters[unique].answered; });
  }
  State::Waiter waiter = std::move(state_->waiters[unique]);
  state_->waiters.erase(unique);
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
    std::lock_guard lock(state_->retrieve_mutex);
    auto waiter = state_->waiters.find(notify_unique);
    if (waiter == state_->waiters.end()) return;  // the caller gave up waiting
    waiter->second.data.assign(reply.data.begin(), reply.data.end());
    waiter->second.answered = true;
  }
  state_->retrieve_answered.notify_all();
}

void Notifier::Queue(const Notification& notification, Done done) {
  State::Queued queued{notification.code(), std::vector<std::byte>(notification.size()),
                       std::move(done)};
  notification.CopyTo(queued.bytes);
  {
    std::lock_guard lock(state_->queue_mutex);
    state_->queue.push_back(std::move(queued));
  }
  state_->queue_changed.notify_all();
}

void Notifier::Flush() {
  std::unique_lock lock(state_->queue_mutex);
  state_->queue_changed.wait(lock,
                             [this] { return state_->queue.empty() && state_->in_progress == 0; });
}

// The background sender: everything queued since the last round goes out in one submission.
void Notifier::SendQueued() {
  std::unique_lock lock(state_->queue_mutex);
  for (;;) {
    state_->queue_changed.wait(lock, [this] { return state_->stopping || !state_->queue.empty(); });
    if (state_->queue.empty()) return;  // stopping, and nothing left to send
    std::vector<State::Queued> round(std::make_move_iterator(state_->queue.begin()),
                                     std::make_move_iterator(state_->queue.end()));
    state_->queue.clear();
    state_->in_progress = round.size();
    lock.unlock();

    std::vector<std::vector<iovec>> messages;
    for (State::Queued& q : round) messages.push_back({{q.bytes.data(), q.bytes.size()}});
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
    state_->in_progress = 0;
    state_->queue_changed.notify_all();
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
  std::lock_guard lock(state_->ring_mutex);
  if (!state_->ring_ready) state_->ring_ready = state_->ring.Init(kRingEntries, 0).ok();
  for (size_t start = 0; start < messages.size(); start += kRingEntries) {
    const size_t end = std::min(messages.size(), start + kRingEntries);
    if (!state_->ring_ready) {
      for (size_t i = start; i < end; ++i) {
        const ssize_t w =
            ::writev(dev_fd_, messages[i].data(), static_cast<int>(messages[i].size()));
        results[i] = w < 0 ? -errno : static_cast<int>(w);
      }
      continue;
    }
    for (size_t i = start; i < end; ++i) {
      io_uring_sqe* sqe = state_->ring.NextSqe();
      io_uring_prep_writev(sqe, dev_fd_, messages[i].data(),
                           static_cast<unsigned>(messages[i].size()), 0);
      io_uring_sqe_set_data64(sqe, i);
    }
    size_t completed = 0;
    while (completed < end - start) {
      const int result = state_->ring.SubmitAndWait(1);
      if (result < 0 && result != -EINTR && result != -EAGAIN && result != -EBUSY) break;
      completed += state_->ring.DrainCompletions([&](const io_uring_cqe& cqe) {
        if (cqe.user_data < results.size()) results[cqe.user_data] = cqe.res;
      });
    }
  }
}

}  // namespace ringfuse
