#include "daemon/crash/node_journal.h"

#include <atomic>
#include <cstring>

namespace ringfuse::daemon {

absl::StatusOr<std::unique_ptr<NodeJournal>> NodeJournal::Create() {
  absl::StatusOr<std::unique_ptr<Slots>> slots = Slots::Create(kMemfdName);
  if (!slots.ok()) return slots.status();
  return std::unique_ptr<NodeJournal>(new NodeJournal(std::move(*slots)));
}

absl::StatusOr<std::unique_ptr<NodeJournal>> NodeJournal::Adopt(base::UniqueFd memfd) {
  absl::StatusOr<std::unique_ptr<Slots>> slots = Slots::Adopt(std::move(memfd), "node journal");
  if (!slots.ok()) return slots.status();
  return std::unique_ptr<NodeJournal>(new NodeJournal(std::move(*slots)));
}

bool NodeJournal::Added(uint64_t nodeid, dev_t dev, ino_t ino, mode_t type, std::string_view handle,
                        uint64_t lookups) {
  const bool recorded =
      !handle.empty() && handle.size() <= kMaxHandle && slots_->Write(nodeid, [&](Slot& slot) {
        slot.type = type;
        slot.dev = dev;
        slot.ino = ino;
        slot.lookups = lookups;
        slot.handle_size = static_cast<uint32_t>(handle.size());
        std::memcpy(slot.handle, handle.data(), handle.size());
      });
  if (!recorded) slots_->UnrecordedCount().fetch_add(1, std::memory_order_release);
  return recorded;
}

void NodeJournal::Counted(uint64_t nodeid, uint64_t lookups) {
  slots_->Update(nodeid, [lookups](Slot& slot) {
    std::atomic_ref<uint64_t>(slot.lookups).store(lookups, std::memory_order_release);
  });
}

void NodeJournal::Dropped(uint64_t nodeid, bool recorded) {
  if (recorded) {
    slots_->Erase(nodeid);
  } else {
    slots_->UnrecordedCount().fetch_sub(1, std::memory_order_release);
  }
}

NodeJournal::Recovery NodeJournal::Recover() {
  Recovery recovery;
  slots_->Recover([&](const Slot& slot) {
    if (slot.handle_size == 0 || slot.handle_size > kMaxHandle ||
        slot.key == InodeTable::kRootNodeId) {
      return false;
    }
    SavedNode& node = recovery.nodes.emplace_back();
    node.nodeid = slot.key;
    node.dev = static_cast<dev_t>(slot.dev);
    node.ino = static_cast<ino_t>(slot.ino);
    node.type = static_cast<mode_t>(slot.type);
    node.handle.assign(slot.handle, slot.handle_size);
    node.lookups = slot.lookups;  // its writer is gone
    return true;
  });
  // The dead daemon's unrecorded nodes are gone with it; this one counts its own from zero.
  recovery.complete = slots_->UnrecordedCount().exchange(0, std::memory_order_acq_rel) == 0;
  return recovery;
}

}  // namespace ringfuse::daemon
