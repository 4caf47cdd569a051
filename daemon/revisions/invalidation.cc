#include "daemon/revisions/invalidation.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/deadline.h"

namespace ringfuse::daemon {
namespace {

struct Tally {
  InvalidationReport report;
  absl::Status first_error;

  void Count(const absl::Status& status) {
    ++report.messages;
    if (absl::IsNotFound(status)) {
      ++report.not_cached;
    } else if (!status.ok() && first_error.ok()) {
      first_error = status;
    }
  }
};

// Inodes first, then names, as daemons have done it: a name's invalidation can evict its inode
// (the kernel forgets a node whose last dentry goes), which would leave nothing for an
// INVAL_INODE after it. Names deepest first (children have larger node ids than the parents
// they were looked up in) for the same reason: dropping a directory's dentry drops its children's.
std::vector<Notification> EncodeAll(const KernelCache& cache, Tally& tally) {
  std::vector<Notification> messages;
  messages.reserve(cache.entries.size() + cache.nodeids.size());
  // Offset 0, length 0: attributes and every cached page.
  for (const uint64_t nodeid : cache.nodeids) {
    messages.push_back(Notification::InvalInode(nodeid, 0, 0));
  }
  std::vector<const std::pair<uint64_t, std::string>*> names;
  names.reserve(cache.entries.size());
  for (const auto& entry : cache.entries) names.push_back(&entry);
  std::sort(names.begin(), names.end(), [](auto* a, auto* b) { return a->first > b->first; });
  for (const auto* name : names) {
    absl::StatusOr<Notification> message = Notification::InvalEntry(name->first, name->second);
    if (message.ok()) {
      messages.push_back(*message);
    } else {
      tally.Count(message.status());
    }
  }
  return messages;
}

}  // namespace

std::string_view InvalidationMethodName(InvalidationMethod method) {
  switch (method) {
    case InvalidationMethod::kNone: return "none";
    case InvalidationMethod::kEntries: return "entries";
    case InvalidationMethod::kEntriesBatched: return "entries-batched";
    case InvalidationMethod::kEpoch: return "epoch";
  }
  return "?";
}

std::optional<InvalidationMethod> ParseInvalidationMethod(std::string_view name) {
  for (const InvalidationMethod method :
       {InvalidationMethod::kNone, InvalidationMethod::kEntries,
        InvalidationMethod::kEntriesBatched, InvalidationMethod::kEpoch}) {
    if (name == InvalidationMethodName(method)) return method;
  }
  return std::nullopt;
}

absl::StatusOr<InvalidationReport> Invalidate(Notifier& notifier, const KernelCache& cache,
                                              InvalidationMethod method) {
  Tally tally;
  tally.report.entries = cache.entries.size();
  tally.report.inodes = cache.nodeids.size();
  const base::Stopwatch stopwatch;
  switch (method) {
    case InvalidationMethod::kNone: break;
    case InvalidationMethod::kEpoch:
      tally.Count(notifier.Send(Notification::IncEpoch()));
      // The root has no dentry to go stale, so nothing makes the kernel ask for its attributes
      // again: they are invalidated (attributes only) on their own.
      tally.Count(notifier.Send(Notification::InvalInode(InodeTable::kRootNodeId, -1, 0)));
      break;
    case InvalidationMethod::kEntries:
      for (const Notification& message : EncodeAll(cache, tally)) {
        tally.Count(notifier.Send(message));
      }
      break;
    case InvalidationMethod::kEntriesBatched:
      for (const absl::Status& status : notifier.SendBatch(EncodeAll(cache, tally))) {
        tally.Count(status);
      }
      break;
  }
  const bool per_entry =
      method == InvalidationMethod::kEntries || method == InvalidationMethod::kEntriesBatched;
  if (per_entry && !cache.entries_complete) {
    // Some names were not tracked, so they were not invalidated above: only an epoch reaches them.
    tally.Count(notifier.Send(Notification::IncEpoch()));
    tally.report.epoch_fallback = true;
  }
  tally.report.elapsed = stopwatch.elapsed();
  if (!tally.first_error.ok()) {
    return absl::Status(tally.first_error.code(),
                        absl::StrFormat("%s invalidation: %s", InvalidationMethodName(method),
                                        tally.first_error.message()));
  }
  return tally.report;
}

}  // namespace ringfuse::daemon
