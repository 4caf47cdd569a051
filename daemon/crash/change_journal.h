// What a kept ringfused (ringfuse/keeper.h) did with each request that must not be done twice,
// in memory its crash cannot reach (kept_memory.h).
//
// A daemon killed after a change to SOURCE and before its reply reached the kernel leaves the
// request unanswered, and the kernel sends it again to the next daemon (NOTIFY_RESEND, with
// kUniqueResend set in its unique). Done again, a MKDIR would fail with EEXIST, an UNLINK with
// ENOENT, an O_APPEND write would append twice. So each such request is recorded by its unique
// before its backing call (begun) and with the result after it (done); the daemon after the
// crash answers a resent request the dead one had done with that result, and one it had begun
// by looking whether its effect is there, against what the record says of before the call
// (changes_once.h). A kill lands when the killed thread leaves the kernel, so a
// daemon killed in the middle of a call that changes a name has made it (a write stops between
// pages: made in part); one killed before the call has not.
//
// The records are a ring holding the newest kSlots, never erased: a request the kernel got the
// reply to is never sent again, and the kernel never reuses a unique on a connection, so an old
// record is merely never asked for. A record whose change is still being made is never written
// over: a new one skips its slot (a flag of this process's own per slot, so that a dead
// daemon's records give way). A record is written as the slot journal writes one
// (slot_journal.h): its `state` last, a crash leaves it whole or plainly not a record.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "base/fd.h"
#include "daemon/crash/kept_memory.h"
#include "ringfuse/opcode.h"

namespace ringfuse::daemon {

class ChangeJournal {
 public:
  static constexpr size_t kSlots = 65536;
  static constexpr uint32_t kBegun = 0x52464342;  // "RFCB"
  static constexpr uint32_t kDone = 0x52464344;   // "RFCD"
  struct Slot {
    uint32_t state;  // kBegun, kDone, or not a record
    uint32_t opcode;
    uint64_t unique;    // without kUniqueResend
    int64_t result;     // once done: a count, an fh or 0, or -errno
    uint64_t evidence;  // what tells, for a change begun, whether it was made (changes_once.h)
  };
  struct Header {
    uint64_t taken;  // slots ever taken: the next record goes to slot taken % kSlots
  };
  static constexpr size_t kBytes = sizeof(Header) + kSlots * sizeof(Slot);

  // The memfd's name, by which a daemon after a crash knows this journal among the keeper's fds:
  // it names the journal and the format of its records (kept_state.h).
  static constexpr char kMemfdName[] = "ringfused-changes";

  static absl::StatusOr<std::unique_ptr<ChangeJournal>> Create();
  // The journal dead daemons kept in `memfd`; new records go after theirs.
  static absl::StatusOr<std::unique_ptr<ChangeJournal>> Adopt(base::UniqueFd memfd);

  int fd() const { return memory_.fd(); }

  // Records that the request `unique` (kUniqueResend cleared) begins its change; returns the
  // record's place, for Done, which every Begin must be followed by.
  size_t Begin(uint64_t unique, Opcode opcode, uint64_t evidence);
  void Done(size_t record, int64_t result);

  struct Outcome {
    Opcode opcode;
    bool done;
    int64_t result;  // when done
    uint64_t evidence;
  };
  using Outcomes = std::unordered_map<uint64_t, Outcome>;  // by unique
  // The records the journal holds, the newest of each unique. They stay in the journal.
  Outcomes Recover() const;

 private:
  explicit ChangeJournal(KeptMemory memory)
      : memory_(std::move(memory)),
        header_(static_cast<Header*>(memory_.address())),
        slots_(reinterpret_cast<Slot*>(header_ + 1)) {}
  static std::atomic_ref<uint32_t> State(Slot& slot) {
    return std::atomic_ref<uint32_t>(slot.state);
  }

  KeptMemory memory_;
  Header* header_;  // and after it kSlots slots
  Slot* slots_;
  // Whether a change of this process is being made under the record in each slot: between its
  // Begin and its Done, nothing else writes there.
  std::unique_ptr<std::atomic<bool>[]> in_progress_ = std::make_unique<std::atomic<bool>[]>(kSlots);
};

}  // namespace ringfuse::daemon
