// Records of a kept ringfused (ringfuse/keeper.h) written where its crash cannot reach: a memfd
// that the keeper holds too, read back by the daemon started after the crash. The open files
// (open_file_journal.h) and the nodes (node_journal.h) are each kept so.
//
// The memory (kept_memory.h) is a Header and then kSlots fixed-size slots, sparse: a page is only
// there once a record is written to it. A record is written field by field and made valid last
// (a release store of its `state`), and its `state` goes first when it is erased, so a crash in
// the middle of either leaves a slot that is plainly a record or plainly not, never half of one.
// Nothing here makes a system call: keeping a record costs a few stores.
//
// `Slot` is a trivially copyable struct whose first member is `uint32_t state` and which has a
// `uint64_t key`, unique among the valid records.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/fd.h"
#include "daemon/crash/kept_memory.h"

namespace ringfuse::daemon {

// The memfd's first bytes. `used` says how many slots were ever taken, so that a recovery reads
// those alone (reading the rest would fill the sparse memfd). `unrecorded` is the journal's
// owner's to count with: what it could not record (UnrecordedCount).
struct SlotJournalHeader {
  uint64_t used;
  uint64_t unrecorded;
};

template <typename Slot, size_t kSlots, uint32_t kValid>
class SlotJournal {
  static_assert(std::is_trivially_copyable_v<Slot>);
  static_assert(offsetof(Slot, state) == 0);

 public:
  static constexpr size_t kBytes = sizeof(SlotJournalHeader) + kSlots * sizeof(Slot);

  // A new, empty journal in a memfd named `name`.
  static absl::StatusOr<std::unique_ptr<SlotJournal>> Create(const char* name) {
    absl::StatusOr<KeptMemory> memory = KeptMemory::Create(name, kBytes);
    if (!memory.ok()) return memory.status();
    return std::unique_ptr<SlotJournal>(new SlotJournal(std::move(*memory)));
  }
  // The journal a dead daemon kept in `memfd`; DataLoss for a memfd of another size.
  static absl::StatusOr<std::unique_ptr<SlotJournal>> Adopt(base::UniqueFd memfd,
                                                            const char* what) {
    absl::StatusOr<KeptMemory> memory = KeptMemory::Adopt(std::move(memfd), kBytes, what);
    if (!memory.ok()) return memory.status();
    return std::unique_ptr<SlotJournal>(new SlotJournal(std::move(*memory)));
  }
  SlotJournal(const SlotJournal&) = delete;
  SlotJournal& operator=(const SlotJournal&) = delete;

  int fd() const { return memory_.fd(); }

  // Records `key`: `fill(slot)` writes its fields, and the record is valid once it returns.
  // False once every slot is taken.
  template <typename Fill>
  bool Write(uint64_t key, Fill&& fill) {
    absl::MutexLock lock(&mutex_);
    size_t index;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else if (next_unused_ < kSlots) {
      index = next_unused_++;
      Used().store(next_unused_, std::memory_order_release);  // before the slot is valid
    } else {
      return false;
    }
    Slot& slot = slots_[index];
    slot.key = key;
    fill(slot);
    State(slot).store(kValid, std::memory_order_release);
    slot_of_[key] = index;
    return true;
  }
  // Changes `key`'s record in place, if there is one: `update(slot)` must change only fields a
  // single aligned store writes, so that the record is whole at any moment.
  template <typename Change>
  void Update(uint64_t key, Change&& update) {
    absl::MutexLock lock(&mutex_);
    auto found = slot_of_.find(key);
    if (found != slot_of_.end()) update(slots_[found->second]);
  }
  void Erase(uint64_t key) {
    absl::MutexLock lock(&mutex_);
    auto found = slot_of_.find(key);
    if (found == slot_of_.end()) return;
    State(slots_[found->second]).store(0, std::memory_order_release);
    free_.push_back(found->second);
    slot_of_.erase(found);
  }
  // Calls `keep(slot)` for each valid record, and erases those it returns false for (and any
  // whose key came before); from then on the journal holds exactly the records kept.
  template <typename Keep>
  void Recover(Keep&& keep) {
    absl::MutexLock lock(&mutex_);
    slot_of_.clear();
    free_.clear();
    next_unused_ = 0;
    const size_t used = std::min<uint64_t>(Used().load(std::memory_order_acquire), kSlots);
    for (size_t index = 0; index < used; ++index) {
      Slot& slot = slots_[index];
      if (State(slot).load(std::memory_order_acquire) != kValid || slot_of_.contains(slot.key) ||
          !keep(static_cast<const Slot&>(slot))) {
        State(slot).store(0, std::memory_order_release);
        free_.push_back(index);
        continue;
      }
      slot_of_[slot.key] = index;
      next_unused_ = index + 1;
    }
    // Slots past the last record are handed out from next_unused_ on, not from free_.
    std::erase_if(free_, [this](size_t index) { return index >= next_unused_; });
    Used().store(next_unused_, std::memory_order_release);
  }
  // The owner's count of what it could not record, kept with the records.
  std::atomic_ref<uint64_t> UnrecordedCount() {
    return std::atomic_ref<uint64_t>(header_->unrecorded);
  }

 private:
  explicit SlotJournal(KeptMemory memory)
      : memory_(std::move(memory)),
        header_(static_cast<SlotJournalHeader*>(memory_.address())),
        slots_(reinterpret_cast<Slot*>(header_ + 1)) {}

  static std::atomic_ref<uint32_t> State(Slot& slot) {
    return std::atomic_ref<uint32_t>(slot.state);
  }
  std::atomic_ref<uint64_t> Used() { return std::atomic_ref<uint64_t>(header_->used); }

  KeptMemory memory_;
  SlotJournalHeader* header_;  // and after it kSlots slots, shared with the keeper's memfd
  Slot* slots_;
  absl::Mutex mutex_;
  absl::flat_hash_map<uint64_t, size_t> slot_of_ ABSL_GUARDED_BY(mutex_);
  std::vector<size_t> free_ ABSL_GUARDED_BY(mutex_);
  size_t next_unused_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace ringfuse::daemon
