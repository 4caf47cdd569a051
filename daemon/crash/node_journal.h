// The nodes of a kept ringfused (ringfuse/keeper.h), in a journal its crash cannot reach
// (slot_journal.h): for each node the kernel may refer to, its id, backing inode (dev, ino,
// type), file handle and lookup count. The daemon started after a crash rebuilds its inode table
// from them under the same node ids, so the names and nodes the kernel cached stay valid: no
// NOTIFY_INC_EPOCH, no LOOKUP again, and a working directory inside the mount works on.
//
// The table records a node before the reply that names it leaves, and counts a lookup before
// its reply too, so the journal never knows fewer nodes or lookups than the kernel (at most
// more, after a crash between the two: that node then stays until unmount). A node that cannot
// be recorded (no file handle: a user's daemon, an O_TMPFILE; every slot taken) is counted
// instead, and while any lives, a crash looks every name up again (Recovery::complete).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/fd.h"
#include "daemon/crash/slot_journal.h"
#include "daemon/inodes/inode_table.h"

namespace ringfuse::daemon {

class NodeJournal : public NodeRecorder {
 public:
  static constexpr size_t kSlots = size_t{1} << 20;
  static constexpr size_t kMaxHandle = 136;  // InodeHandles' header and MAX_HANDLE_SZ
  struct Slot {
    uint32_t state;  // valid, or not a record
    uint32_t type;   // S_IFMT bits
    uint64_t key;    // the node id
    uint64_t dev;
    uint64_t ino;
    uint64_t lookups;  // written alone, in place (SlotJournal::Update)
    uint32_t handle_size;
    char handle[kMaxHandle];
  };

  // The memfd's name, by which a daemon after a crash knows this journal among the keeper's fds:
  // it names the journal and the format of its records (kept_state.h).
  static constexpr char kMemfdName[] = "ringfused-nodes";

  static absl::StatusOr<std::unique_ptr<NodeJournal>> Create();
  static absl::StatusOr<std::unique_ptr<NodeJournal>> Adopt(base::UniqueFd memfd);

  int fd() const { return slots_->fd(); }

  bool Added(uint64_t nodeid, dev_t dev, ino_t ino, mode_t type, std::string_view handle,
             uint64_t lookups) override;
  void Counted(uint64_t nodeid, uint64_t lookups) override;
  void Dropped(uint64_t nodeid, bool recorded) override;

  struct Recovery {
    std::vector<SavedNode> nodes;
    bool complete = false;  // every node the kernel may know is among them
  };
  // The valid records, and from then on the journal holds exactly those.
  Recovery Recover();

 private:
  using Slots = SlotJournal<Slot, kSlots, 0x52464e44>;  // "RFND"
  explicit NodeJournal(std::unique_ptr<Slots> slots) : slots_(std::move(slots)) {}

  std::unique_ptr<Slots> slots_;
};

}  // namespace ringfuse::daemon
