// The open files and directories of a kept ringfused (ringfuse/keeper.h), in a journal its crash
// cannot reach (slot_journal.h). Each is a record of its fh, the backing open's flags (with
// O_DIRECTORY for a directory), node id and its inode's file handle; the daemon started after a
// crash reopens each by handle under the same fh, so that a file open across the crash reads and
// writes on, and a directory lists on. One whose record a crash tore fails cleanly (EBADF), as
// one without a record does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/fd.h"
#include "daemon/crash/slot_journal.h"

namespace ringfuse::daemon {

class OpenFileJournal {
 public:
  static constexpr size_t kSlots = 65536;
  static constexpr size_t kMaxHandle = 136;  // InodeHandles' header and MAX_HANDLE_SZ
  using Header = SlotJournalHeader;
  // One open file. `state` is written last when a record is made and first when it goes.
  struct Slot {
    uint32_t state;  // valid, or not a record
    int32_t flags;
    uint64_t key;  // the fh
    uint64_t nodeid;
    uint32_t handle_size;
    char handle[kMaxHandle];
  };

  // The memfd's name, by which a daemon after a crash knows this journal among the keeper's fds:
  // it names the journal and the format of its records (kept_state.h).
  static constexpr char kMemfdName[] = "ringfused-open-files";

  // A new, empty journal in a memfd.
  static absl::StatusOr<std::unique_ptr<OpenFileJournal>> Create();
  // The journal a dead daemon kept in `memfd`, with the records it holds.
  static absl::StatusOr<std::unique_ptr<OpenFileJournal>> Adopt(base::UniqueFd memfd);

  int fd() const { return slots_->fd(); }

  // `fh` was opened, on node `nodeid`; `handle` is its inode's (InodeHandles::HandleOf). Nothing
  // is written for a handle too long or once every slot is taken: that file is then lost at a
  // crash.
  void Opened(uint64_t fh, uint64_t nodeid, std::string_view handle, int flags);
  void Released(uint64_t fh) { slots_->Erase(fh); }

  struct Entry {
    uint64_t fh;
    uint64_t nodeid;
    int flags;
    std::string handle;
  };
  // The valid records, and from then on the journal holds exactly those.
  std::vector<Entry> Recover();

 private:
  using Slots = SlotJournal<Slot, kSlots, 0x52464f46>;  // "RFOF"
  explicit OpenFileJournal(std::unique_ptr<Slots> slots) : slots_(std::move(slots)) {}

  std::unique_ptr<Slots> slots_;
};

}  // namespace ringfuse::daemon
