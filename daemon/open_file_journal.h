// The open files of a kept ringfused (ringfuse/keeper.h), written where its crash cannot reach:
// a memfd that the keeper holds too. Each open file is a record of its fh, the backing open's
// flags, node id and its inode's file handle; the daemon started after a crash reopens each by
// handle under the same fh, so that a file open across the crash reads and writes on (and
// answers fstat, which the kernel sends by node id alone).
//
// A record is written field by field into shared memory and made valid last (a release store),
// so a crash in the middle of one leaves it invalid, never half-read: that file then fails
// cleanly (EBADF) as one without a record does. Nothing here makes a system call: an open costs
// a few stores more.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "transport/fd.h"

namespace ringfuse::daemon {

class OpenFileJournal {
 public:
  // A new, empty journal in a memfd.
  static absl::StatusOr<std::unique_ptr<OpenFileJournal>> Create();
  // The journal a dead daemon kept in `memfd`, with the records it holds.
  static absl::StatusOr<std::unique_ptr<OpenFileJournal>> Adopt(internal::UniqueFd memfd);
  ~OpenFileJournal();
  OpenFileJournal(const OpenFileJournal&) = delete;
  OpenFileJournal& operator=(const OpenFileJournal&) = delete;

  int fd() const { return memfd_.get(); }

  // `fh` was opened, on node `nodeid`; `handle` is its inode's (InodeHandles::HandleOf). Nothing
  // is written for a handle too long or once every slot is taken: that file is then lost at a
  // crash.
  void Opened(uint64_t fh, uint64_t nodeid, std::string_view handle, int flags);
  void Released(uint64_t fh);

  struct Entry {
    uint64_t fh;
    uint64_t nodeid;
    int flags;
    std::string handle;
  };
  // The valid records, and from then on the journal holds exactly those.
  std::vector<Entry> Recover();

  static constexpr size_t kSlots = 65536;
  static constexpr size_t kMaxHandle = 136;  // InodeHandles' header and MAX_HANDLE_SZ
  // The memfd's layout: a header, then kSlots slots. The header says how many slots were ever
  // used, so that a recovery reads those alone (reading the rest would fill the sparse memfd).
  struct Header {
    uint64_t used;
  };
  // One open file. `state` is written last when a record is made and first when it goes.
  struct Slot {
    uint32_t state;  // kValid, or not a record
    int32_t flags;
    uint64_t fh;
    uint64_t nodeid;
    uint32_t handle_size;
    char handle[kMaxHandle];
  };

 private:
  OpenFileJournal(internal::UniqueFd memfd, Header* header);
  static absl::StatusOr<Header*> Map(int memfd);

  internal::UniqueFd memfd_;
  Header* header_;  // and after it kSlots slots, shared with the keeper's copy of the memfd
  Slot* slots_;
  absl::Mutex mutex_;
  absl::flat_hash_map<uint64_t, size_t> slot_of_ ABSL_GUARDED_BY(mutex_);
  std::vector<size_t> free_ ABSL_GUARDED_BY(mutex_);
  size_t next_unused_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace ringfuse::daemon
