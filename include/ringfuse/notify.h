/// \file
/// The nine notifications a server may send the kernel, as values a Notifier sends.
///
/// A notification is a fuse_out_header with unique 0 and error = the notify code, then a payload.
/// Each factory (Notification::InvalInode, ...) validates what it is given and returns a
/// Notification: a small fixed head plus views of the caller's variable parts (names, data, node
/// ids), ready for writev without a copy. The views must outlive the Notification.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "ringfuse/bytes.h"
#include "ringfuse/export.h"
#include "ringfuse/wire.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// One notification ready to send: its fixed head, and views of the caller's variable parts.
class Notification {
 public:
  /// Wakes the pollers waiting on `kernel_handle` (the kh of a POLL request).
  static Notification Poll(uint64_t kernel_handle);
  /// off < 0: attributes only; otherwise pages from off, len <= 0 meaning to the end.
  static Notification InvalInode(uint64_t nodeid, int64_t offset, int64_t length);
  /// flags: wire::kExpireOnly to expire the dentry rather than drop it (7.38+).
  static absl::StatusOr<Notification> InvalEntry(uint64_t parent, std::string_view name,
                                                 uint32_t flags = 0);
  /// Like InvalEntry, and also tells the kernel `child` is gone (deleted from `parent`).
  static absl::StatusOr<Notification> Delete(uint64_t parent, uint64_t child,
                                             std::string_view name);
  /// Puts `data` into the kernel's page cache of `nodeid` at `offset`.
  static absl::StatusOr<Notification> Store(uint64_t nodeid, uint64_t offset, ConstBytes data);
  /// The kernel answers with a NOTIFY_REPLY request whose unique is `notify_unique`.
  static Notification Retrieve(uint64_t notify_unique, uint64_t nodeid, uint64_t offset,
                               uint32_t size);
  /// Asks the kernel to send again every request still waiting for a reply (7.40).
  static Notification Resend();
  /// One message marks every cached dentry of the connection stale (7.44).
  static Notification IncEpoch();
  /// Asks the kernel to drop unused dentries of these inodes (7.45).
  static absl::StatusOr<Notification> Prune(std::span<const uint64_t> nodeids);

  static constexpr size_t kMaxParts = 3;  ///< head, then up to two variable parts

  /// Which notification this is.
  wire::NotifyCode code() const { return code_; }
  /// The whole message's length in bytes.
  size_t size() const;
  /// The message as consecutive parts; returns how many of `parts` were filled.
  size_t Gather(std::array<ConstBytes, kMaxParts>& parts) const;
  /// Copies the whole message into `out`; returns the bytes written, or 0 when `out` is too small.
  size_t CopyTo(MutableBytes out) const;

 private:
  friend class NotificationBuilder;
  static constexpr size_t kMaxHead = sizeof(wire::OutHeader) + sizeof(wire::NotifyRetrieveOut);

  wire::NotifyCode code_{};
  std::array<std::byte, kMaxHead> head_{};
  size_t head_size_ = 0;
  std::array<ConstBytes, kMaxParts - 1> tail_{};
};

/// The oldest protocol minor whose kernels understand a notification code.
uint32_t NotifyMinimumMinor(wire::NotifyCode code);
/// "POLL", "INVAL_INODE", ...: the kernel's name without FUSE_NOTIFY_.
std::string_view NotifyCodeName(wire::NotifyCode code);

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
