#include "daemon/invalidation.h"

#include <vector>

#include "absl/strings/str_format.h"

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

// Names first: once its dentries are gone no new path walk reaches an old node, so the inode
// invalidations that follow cannot be undone by a walk that began before.
std::vector<Notification> EncodeAll(const KernelCache& cache, Tally& tally) {
  std::vector<Notification> messages;
  messages.reserve(cache.entries.size() + cache.nodeids.size());
  for (const auto& [parent, name] : cache.entries) {
    absl::StatusOr<Notification> entry = EncodeNotifyInvalEntry(parent, name);
    if (entry.ok()) {
      messages.push_back(*entry);
    } else {
      tally.Count(entry.status());
    }
  }
  // Offset 0, length 0: attributes and every cached page, as daemons have done it.
  for (const uint64_t nodeid : cache.nodeids) {
    messages.push_back(EncodeNotifyInvalInode(nodeid, 0, 0));
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
  const absl::Time start = absl::Now();
  switch (method) {
    case InvalidationMethod::kNone: break;
    case InvalidationMethod::kEpoch: tally.Count(notifier.Send(EncodeNotifyIncEpoch())); break;
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
  tally.report.elapsed = absl::Now() - start;
  if (!tally.first_error.ok()) {
    return absl::Status(tally.first_error.code(),
                        absl::StrFormat("%s invalidation: %s", InvalidationMethodName(method),
                                        tally.first_error.message()));
  }
  return tally.report;
}

}  // namespace ringfuse::daemon
