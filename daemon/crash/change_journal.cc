#include "daemon/crash/change_journal.h"

#include <algorithm>

namespace ringfuse::daemon {

namespace {

// The count of slots taken from which it could wrap round within a daemon's life: below it, the
// 2^63 changes left take 292,000 years at a million a second.
constexpr uint64_t kMostTaken = uint64_t{1} << 63;

// A count beyond kMostTaken is no daemon's (a forged or corrupt header). Left, it wraps round
// within a few changes, and the recovery after the next crash takes the journal for nearly
// empty: the records made since lost, and the dead daemons' with them. So it is put back to
// where it points in the ring, a whole ring on: the same slots held, in the same order.
void KeepTakenFromWrapping(ChangeJournal::Header& header) {
  std::atomic_ref<uint64_t> taken(header.taken);
  const uint64_t now = taken.load(std::memory_order_acquire);
  if (now >= kMostTaken) {
    taken.store(now % ChangeJournal::kSlots + ChangeJournal::kSlots, std::memory_order_release);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChangeJournal>> ChangeJournal::Create() {
  absl::StatusOr<KeptMemory> memory = KeptMemory::Create(kMemfdName, kBytes);
  if (!memory.ok()) return memory.status();
  return std::unique_ptr<ChangeJournal>(new ChangeJournal(std::move(*memory)));
}

absl::StatusOr<std::unique_ptr<ChangeJournal>> ChangeJournal::Adopt(base::UniqueFd memfd) {
  absl::StatusOr<KeptMemory> memory = KeptMemory::Adopt(std::move(memfd), kBytes, "change journal");
  if (!memory.ok()) return memory.status();
  KeepTakenFromWrapping(*static_cast<Header*>(memory->address()));
  return std::unique_ptr<ChangeJournal>(new ChangeJournal(std::move(*memory)));
}

// There are far fewer changes in progress than slots (each holds one of the transport's
// buffers), so the search ends at once.
size_t ChangeJournal::Begin(uint64_t unique, Opcode opcode, uint64_t evidence) {
  size_t record;
  do {
    record =
        std::atomic_ref<uint64_t>(header_->taken).fetch_add(1, std::memory_order_acq_rel) % kSlots;
  } while (in_progress_[record].exchange(true, std::memory_order_acquire));
  Slot& slot = slots_[record];
  // No longer the old record before any field is the new one's. A kill stops this thread between
  // two instructions, so the order that matters is this thread's own, as compiled.
  State(slot).store(0, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  slot.opcode = static_cast<uint32_t>(opcode);
  slot.unique = unique;
  slot.result = 0;
  slot.evidence = evidence;
  State(slot).store(kBegun, std::memory_order_release);
  return record;
}

void ChangeJournal::Done(size_t record, int64_t result) {
  Slot& slot = slots_[record];
  slot.result = result;
  State(slot).store(kDone, std::memory_order_release);
  in_progress_[record].store(false, std::memory_order_release);
}

// Oldest first, so that a newer record of the same unique (the next daemon's, done again after
// a second crash) takes the place of the older.
ChangeJournal::Outcomes ChangeJournal::Recover() const {
  const uint64_t taken = std::atomic_ref<uint64_t>(header_->taken).load(std::memory_order_acquire);
  const uint64_t held = std::min<uint64_t>(taken, kSlots);
  Outcomes outcomes;
  outcomes.reserve(held);
  for (uint64_t age = held; age > 0; --age) {
    Slot& slot = slots_[(taken - age) % kSlots];
    const uint32_t state = State(slot).load(std::memory_order_acquire);
    if (state != kBegun && state != kDone) continue;
    outcomes[slot.unique] =
        Outcome{static_cast<Opcode>(slot.opcode), state == kDone, slot.result, slot.evidence};
  }
  return outcomes;
}

}  // namespace ringfuse::daemon
