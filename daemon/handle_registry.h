// The handles (fh) the daemon gives the kernel for open files and directories, owned here until
// RELEASE or RELEASEDIR. What the kernel never releases (the mount went away first, or an
// open's reply never reached a caller) is freed with the filesystem rather than leaked.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace ringfuse::daemon {

template <typename Handle>
class HandleRegistry {
 public:
  // The fh the kernel is given: the handle's address, so requests reach it without a lookup.
  uint64_t Add(std::unique_ptr<Handle> handle) {
    Handle* raw = handle.get();
    absl::MutexLock lock(&mutex_);
    owned_.emplace(raw, std::move(handle));
    return reinterpret_cast<uint64_t>(raw);
  }

  static Handle& Of(uint64_t fh) { return *reinterpret_cast<Handle*>(fh); }

  // Gives the handle back to the caller at release; null for an fh this registry never gave.
  std::unique_ptr<Handle> Take(uint64_t fh) {
    absl::MutexLock lock(&mutex_);
    auto node = owned_.extract(reinterpret_cast<Handle*>(fh));
    return node.empty() ? nullptr : std::move(node.mapped());
  }

  size_t size() const {
    absl::MutexLock lock(&mutex_);
    return owned_.size();
  }

 private:
  mutable absl::Mutex mutex_;
  absl::flat_hash_map<Handle*, std::unique_ptr<Handle>> owned_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace ringfuse::daemon
