// Kernel passthrough allows one backing file per FUSE inode at a time (a second registration
// makes the open fail with EIO), so all opens of one inode share one backing id: registered by
// the first open, counted, and closed by the last release.
//
// The registered file gives the kernel a path, and the registration the credentials it opens
// with (the registering thread's, fs/fuse/backing.c): at each open in passthrough the kernel
// opens a backing file of its own, from that path with that open's flags (fs/fuse/passthrough.c,
// fuse_passthrough_open). So the shared file is opened read-only, whatever the first open asked
// for: a writer through the mount is a writer of SOURCE's file while it has it open, and only
// then, as natively (running the file there meanwhile fails ETXTBSY, and so does the writer's
// open while it runs); a reader keeps no native run from starting and breaks no lease a native
// reader would not.
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
  // The backing id for the inode `handle_fd` is open on, registering it with `backing_files`
  // first if no open of that inode holds one. An error when nothing is registered and
  // registering failed: the caller may serve that open itself.
  absl::StatusOr<int32_t> Acquire(const BackingFiles& backing_files, int handle_fd, dev_t dev,
                                  ino_t ino);
  // One open of (dev, ino) ended; the registration is closed when it was the last.
  void Release(dev_t dev, ino_t ino);

  // A shared registration as a handover carries it: the connection keeps the id registered.
  struct Saved {
    dev_t dev;
    ino_t ino;
    int32_t id;
    // The handover layout's (handover_state.h, version 1): whether the registered file was
    // opened read-write, as a daemon from before did where it could. Saved false, ignored when
    // restored: the kernel's own backing files carry each open's access.
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

  Shard shards_[kShards];
};

}  // namespace ringfuse::daemon
