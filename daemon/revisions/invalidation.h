// Telling the kernel that what it cached from the daemon is stale, by one of the ways a
// revisioned filesystem can: per entry and inode (what daemons did before 7.44), the same in one
// io_uring submission, one INC_EPOCH, or nothing (rely on timeouts).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "daemon/inodes/inode_table.h"
#include "ringfuse/notifier.h"

namespace ringfuse::daemon {

enum class InvalidationMethod {
  kNone,            // nothing sent: cached entries live until their timeouts
  kEntries,         // one INVAL_ENTRY per name, then one INVAL_INODE per node, each a write
  kEntriesBatched,  // the same messages, submitted together through io_uring
  kEpoch,           // one INC_EPOCH (every cached dentry of the connection is stale), and the
                    // root's attributes
};

std::string_view InvalidationMethodName(InvalidationMethod method);
std::optional<InvalidationMethod> ParseInvalidationMethod(std::string_view name);

struct InvalidationReport {
  absl::Duration elapsed;
  uint64_t entries = 0;         // names the daemon had handed out
  uint64_t inodes = 0;          // nodes the kernel had not forgotten
  uint64_t messages = 0;        // notifications sent
  uint64_t not_cached = 0;      // of those, how many the kernel no longer held (ENOENT)
  bool epoch_fallback = false;  // per entry, but more names than were tracked: INC_EPOCH too
};

// Sends what `method` sends for `cache` and waits until the kernel has taken all of it. An
// error is one the kernel gave for a message (other than "not cached"); the rest are still sent.
absl::StatusOr<InvalidationReport> Invalidate(Notifier& notifier, const KernelCache& cache,
                                              InvalidationMethod method);

}  // namespace ringfuse::daemon
