#include "ringfuse/notify.h"

#include <cstring>
#include <limits>

#include "absl/strings/str_format.h"
#include "protocol/reply_parts.h"
#include "ringfuse/protocol/frames.h"

namespace ringfuse {

namespace {
constexpr std::byte kNul[1] = {std::byte{0}};
}  // namespace

// Builds a Notification: the out header and fixed struct in the head, variable parts as views.
class NotificationBuilder {
 public:
  template <typename Fixed>
  static Notification Make(wire::NotifyCode code, const Fixed& fixed, ConstBytes first = {},
                           ConstBytes second = {}) {
    Notification n;
    n.code_ = code;
    std::memcpy(n.head_.data() + sizeof(wire::OutHeader), &fixed, sizeof(Fixed));
    n.tail_ = {first, second};
    n.head_size_ = sizeof(wire::OutHeader) + sizeof(Fixed);
    WriteHeader(n);
    return n;
  }

  static Notification Bare(wire::NotifyCode code) {
    Notification n;
    n.code_ = code;
    n.head_size_ = sizeof(wire::OutHeader);
    WriteHeader(n);
    return n;
  }

 private:
  static_assert(sizeof(wire::NotifyRetrieveOut) >= sizeof(wire::NotifyStoreOut));

  static void WriteHeader(Notification& n) {
    size_t length = n.head_size_;
    for (ConstBytes part : n.tail_) length += part.size();
    const wire::OutHeader header{static_cast<uint32_t>(length), static_cast<int32_t>(n.code_), 0};
    std::memcpy(n.head_.data(), &header, sizeof(header));
  }
};

size_t Notification::size() const {
  size_t length = head_size_;
  for (ConstBytes part : tail_) length += part.size();
  return length;
}

size_t Notification::Gather(std::array<ConstBytes, kMaxParts>& parts) const {
  size_t count = 0;
  parts[count++] = ConstBytes(head_.data(), head_size_);
  for (ConstBytes part : tail_) {
    if (!part.empty()) parts[count++] = part;
  }
  return count;
}

size_t Notification::CopyTo(MutableBytes out) const {
  if (out.size() < size()) return 0;
  std::array<ConstBytes, kMaxParts> parts;
  const size_t count = Gather(parts);
  return internal::JoinParts(std::span(parts.data(), count), out);
}

uint32_t NotifyMinimumMinor(wire::NotifyCode code) {
  switch (code) {
    case wire::NotifyCode::kPoll: return 11;
    case wire::NotifyCode::kInvalInode: return 12;
    case wire::NotifyCode::kInvalEntry: return 12;
    case wire::NotifyCode::kStore: return 15;
    case wire::NotifyCode::kRetrieve: return 15;
    case wire::NotifyCode::kDelete: return 18;
    case wire::NotifyCode::kResend: return 40;
    case wire::NotifyCode::kIncEpoch: return 44;
    case wire::NotifyCode::kPrune: return 45;
  }
  return std::numeric_limits<uint32_t>::max();
}

std::string_view NotifyCodeName(wire::NotifyCode code) {
  switch (code) {
    case wire::NotifyCode::kPoll: return "POLL";
    case wire::NotifyCode::kInvalInode: return "INVAL_INODE";
    case wire::NotifyCode::kInvalEntry: return "INVAL_ENTRY";
    case wire::NotifyCode::kStore: return "STORE";
    case wire::NotifyCode::kRetrieve: return "RETRIEVE";
    case wire::NotifyCode::kDelete: return "DELETE";
    case wire::NotifyCode::kResend: return "RESEND";
    case wire::NotifyCode::kIncEpoch: return "INC_EPOCH";
    case wire::NotifyCode::kPrune: return "PRUNE";
  }
  return "UNKNOWN";
}

namespace {

absl::Status CheckName(std::string_view name) {
  if (name.empty() || name.size() > wire::kNameMax) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a notified name must have 1 to %u bytes, not %u", wire::kNameMax, name.size()));
  }
  if (name.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("a notified name must not contain a NUL byte");
  }
  return absl::OkStatus();
}

}  // namespace

Notification Notification::Poll(uint64_t kernel_handle) {
  return NotificationBuilder::Make(wire::NotifyCode::kPoll,
                                   wire::NotifyPollWakeupOut{kernel_handle});
}

Notification Notification::InvalInode(uint64_t nodeid, int64_t offset, int64_t length) {
  return NotificationBuilder::Make(wire::NotifyCode::kInvalInode,
                                   wire::NotifyInvalInodeOut{nodeid, offset, length});
}

absl::StatusOr<Notification> Notification::InvalEntry(uint64_t parent, std::string_view name,
                                                      uint32_t flags) {
  if (absl::Status status = CheckName(name); !status.ok()) return status;
  const wire::NotifyInvalEntryOut fixed{parent, static_cast<uint32_t>(name.size()), flags};
  return NotificationBuilder::Make(wire::NotifyCode::kInvalEntry, fixed, AsBytes(name), kNul);
}

absl::StatusOr<Notification> Notification::Delete(uint64_t parent, uint64_t child,
                                                  std::string_view name) {
  if (absl::Status status = CheckName(name); !status.ok()) return status;
  const wire::NotifyDeleteOut fixed{parent, child, static_cast<uint32_t>(name.size()), 0};
  return NotificationBuilder::Make(wire::NotifyCode::kDelete, fixed, AsBytes(name), kNul);
}

absl::StatusOr<Notification> Notification::Store(uint64_t nodeid, uint64_t offset,
                                                 ConstBytes data) {
  if (data.size() > std::numeric_limits<uint32_t>::max() - sizeof(wire::NotifyStoreOut) -
                        sizeof(wire::OutHeader)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a STORE notification cannot carry %u bytes", data.size()));
  }
  const wire::NotifyStoreOut fixed{nodeid, offset, static_cast<uint32_t>(data.size()), 0};
  return NotificationBuilder::Make(wire::NotifyCode::kStore, fixed, data);
}

Notification Notification::Retrieve(uint64_t notify_unique, uint64_t nodeid, uint64_t offset,
                                    uint32_t size) {
  return NotificationBuilder::Make(wire::NotifyCode::kRetrieve,
                                   wire::NotifyRetrieveOut{notify_unique, nodeid, offset, size, 0});
}

Notification Notification::Resend() { return NotificationBuilder::Bare(wire::NotifyCode::kResend); }

Notification Notification::IncEpoch() {
  return NotificationBuilder::Bare(wire::NotifyCode::kIncEpoch);
}

absl::StatusOr<Notification> Notification::Prune(std::span<const uint64_t> nodeids) {
  constexpr size_t kMaxIds = (std::numeric_limits<uint32_t>::max() - sizeof(wire::OutHeader) -
                              sizeof(wire::NotifyPruneOut)) /
                             sizeof(uint64_t);
  if (nodeids.size() > kMaxIds) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a PRUNE notification cannot carry %u node ids", nodeids.size()));
  }
  const wire::NotifyPruneOut fixed{static_cast<uint32_t>(nodeids.size()), 0, 0};
  return NotificationBuilder::Make(wire::NotifyCode::kPrune, fixed, std::as_bytes(nodeids));
}

}  // namespace ringfuse
