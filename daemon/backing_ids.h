// Kernel passthrough allows one backing file per FUSE inode at a time (a second registration
// makes the open fail with EIO), so all opens of one inode share one backing id: registered by
// the first open, counted, and closed by the last release.
//
// The shared backing file is opened read-write whenever the backing filesystem lets the daemon,
// even for a first open that only reads: a later open of the same inode may write, and the
// kernel neither lets it use another backing file while this one is registered nor lets the
// daemon serve it itself (fs/fuse/iomode.c: every open of an inode open in passthrough must be
// passthrough too). What that costs: while a file is open through the mount, the daemon is a
// writer of it in SOURCE, so running it there natively fails ETXTBSY, and leases and inotify
// see a writer. Not in the read-only modes (-o ro, revisions), where no open writes: there the
// shared file is opened read-only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "ringfuse/backing.h"

namespace ringfuse::daemon {

class BackingIds {
 public:
  // `read_only`: no open of the mount may write (they are refused EROFS before they get here).
  explicit BackingIds(bool read_only) : read_only_(read_only) {}

  // The backing id for the inode `handle_fd` is open on, registering it with `backing_files`
  // first if no open of that inode holds one. FailedPrecondition if `writes` but the registered
  // shared file is read-only (it was a running executable, say, when it was opened): that open must
  // fail, since the kernel accepts no other kind of open of the inode. Another error when nothing
  // is registered and registering failed: the caller may serve that open itself.
  absl::StatusOr<int32_t> Acquire(const BackingFiles& backing_files, int handle_fd, dev_t dev,
                                  ino_t ino, bool writes);
  // One open of (dev, ino) ended; the registration is closed when it was the last.
  void Release(dev_t dev, ino_t ino);

  // A shared registration as a handover carries it: the connection keeps the id registered.
  struct Saved {
    dev_t dev;
    ino_t ino;
    int32_t id;
    bool writable;
    uint32_t opens;
  };
  std::vector<Saved> Save();
  // Takes on the registrations `saved` on the connection `backing_files` serves now, in a
  // BackingIds that holds none yet.
  absl::Status Restore(const BackingFiles& backing_files, const std::vector<Saved>& saved);

 private:
  struct Shared {
    BackingFile backing;
    bool writable;
    uint32_t opens;
  };

  // Sharded by inode, so that opens of different files on different queue threads lock
  // different shards (issue 21); a registration is made under its shard's lock, so that two
  // opens of one inode share it.
  static constexpr size_t kShards = 64;
  struct alignas(64) Shard {
    absl::Mutex mutex;
    std::map<std::pair<dev_t, ino_t>, Shared> shared ABSL_GUARDED_BY(mutex);
  };
  Shard& ShardOf(dev_t dev, ino_t ino) { return shards_[(ino ^ dev) % kShards]; }

  const bool read_only_;
  Shard shards_[kShards];
};

}  // namespace ringfuse::daemon
