// libFuzzer target over the change journal a kept ringfused finds after a crash
// (daemon/crash/change_journal.h): the memfd the keeper hands it, made from the input, adopted and
// recovered as RecoverAfterCrash (daemon/main.cc) does; then a PassthroughFs answers the
// requests the kernel resends from what the journal says the dead daemon did, and records the
// changes it makes in it.
//
// Input: one byte (what may be wrong with the memfd as a whole, kept_image.h), a 16-bit
// little-endian length and that many bytes of the memfd from offset 0 (the header, `taken`, and
// slots: state, opcode, unique, result, evidence; the rest of the memfd is zeros), then requests,
// each after a 16-bit little-endian length (fuzz_checks.h), with their uniques as given: a resent
// one has kUniqueResend set. This daemon is incarnation 1 (its own node ids and fh values start
// at 2^40); the scratch tree is made again every kInputsPerTree inputs.
//
// Whatever the bytes: a memfd no ringfused made is refused with DataLoss, any other recovered
// without a crash; the recovery gives the newest record of each unique among the slots the
// journal holds (the last `taken`, at most kSlots); whatever those records say, every request
// is answered as often as the kernel waits for, with a reply the kernel takes, and nothing
// outside the served directory changes; and a change recorded after all that is what the next
// daemon recovers.
#include <fcntl.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "daemon/crash/change_journal.h"
#include "daemon/crash/incarnation.h"
#include "daemon/fs/passthrough_fs.h"
#include "tests/fuzz/fuzz_checks.h"
#include "tests/fuzz/fuzz_sandbox.h"
#include "tests/fuzz/kept_image.h"

namespace ringfuse::fuzz {
namespace {

using daemon::ChangeJournal;

constexpr int kInputsPerTree = 64;
constexpr uint32_t kIncarnation = 1;
constexpr uint64_t kSlots = ChangeJournal::kSlots;

bool IsRecord(uint32_t state) {
  return state == ChangeJournal::kBegun || state == ChangeJournal::kDone;
}

// What Recover must give, from the image alone: of the slots it holds (the last min(taken,
// kSlots) taken, at taken % kSlots and before, round the ring), the newest record of each unique.
ChangeJournal::Outcomes Expected(std::vector<std::byte> image) {
  // The memfd holds zeros past the image: its last slot may end there.
  constexpr size_t kSlotBytes = sizeof(ChangeJournal::Slot);
  ChangeJournal::Header header{};
  image.resize(sizeof(header) +
               (std::max(image.size(), sizeof(header)) - sizeof(header) + kSlotBytes - 1) /
                   kSlotBytes * kSlotBytes);
  std::memcpy(&header, image.data(), sizeof(header));
  std::map<uint64_t, uint64_t> newest;  // unique -> how new its record is (kSlots - 1: newest)
  ChangeJournal::Outcomes outcomes;
  for (uint64_t index = 0;
       sizeof(header) + (index + 1) * sizeof(ChangeJournal::Slot) <= image.size(); ++index) {
    ChangeJournal::Slot slot;
    std::memcpy(&slot, image.data() + sizeof(header) + index * sizeof(slot), sizeof(slot));
    if (!IsRecord(slot.state) || (header.taken < kSlots && index >= header.taken)) continue;
    const uint64_t newness = (index + kSlots - header.taken % kSlots) % kSlots;
    auto [at, inserted] = newest.try_emplace(slot.unique, newness);
    if (!inserted && at->second > newness) continue;
    at->second = newness;
    outcomes[slot.unique] = {static_cast<Opcode>(slot.opcode), slot.state == ChangeJournal::kDone,
                             slot.result, slot.evidence};
  }
  return outcomes;
}

bool Same(const ChangeJournal::Outcomes& a, const ChangeJournal::Outcomes& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [unique, outcome] : a) {
    auto other = b.find(unique);
    if (other == b.end() || other->second.opcode != outcome.opcode ||
        other->second.done != outcome.done || other->second.result != outcome.result ||
        other->second.evidence != outcome.evidence) {
      return false;
    }
  }
  return true;
}

// Dispatches every request; returns how many replies each unique is owed (INIT's included).
std::map<uint64_t, int> DispatchAll(internal::Dispatcher& dispatcher, ConstBytes requests) {
  std::map<uint64_t, int> owed = {{2, 1}};
  ForEachMessage(requests, [&](ConstBytes message) {
    std::vector<std::byte> copy(message.begin(), message.end());  // exactly sized, for ASan
    if (copy.size() >= 16) {
      uint64_t unique;
      std::memcpy(&unique, copy.data() + 8, sizeof(unique));
      owed[unique] += RepliesExpected(copy);
    }
    dispatcher.Dispatch(copy, internal::Delivery{});
  });
  return owed;
}

// The kernel resends what the dead daemon had read; this daemon answers from the journal, and
// records what it does there. Lock waits still pending are answered when `fs` goes.
void Serve(const Sandbox& sandbox, ChangeJournal& journal, ChangeJournal::Outcomes outcomes,
           ConstBytes requests) {
  daemon::last_fh_given.store(0);  // no handle outlives an input
  CountingChannel channel;
  std::map<uint64_t, int> owed;
  {
    daemon::DaemonOptions options;
    options.source = sandbox.source();
    daemon::PassthroughFs fs(
        base::UniqueFd(::open(options.source.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)), options);
    if (!daemon::ContinueAfterCrash(fs, kIncarnation).ok()) std::abort();
    fs.parts().changes_once.KeepIn(&journal, std::move(outcomes));
    NullDiagnostics diagnostics;
    internal::Dispatcher dispatcher(fs, channel, diagnostics, InitWishes{});
    SendInit(dispatcher, KernelOffer());
    owed = DispatchAll(dispatcher, requests);
  }
  size_t owed_uniques = 0;
  for (const auto& [unique, count] : owed) {
    if (channel.RepliesTo(unique) != count) std::abort();
    owed_uniques += count > 0;
  }
  if (channel.UniquesAnswered() != owed_uniques) std::abort();  // a reply to no request
}

// Two changes recorded now are what the next daemon finds for their uniques, whatever the dead
// daemons left.
void CheckTheNextDaemonFindsNewChanges(ChangeJournal& journal) {
  constexpr uint64_t kUnique = uint64_t{1} << 62;  // no request of the input's clears it
  journal.Done(journal.Begin(kUnique, Opcode::kMkdir, 7), -EEXIST);
  journal.Begin(kUnique + 1, Opcode::kUnlink, 9);
  absl::StatusOr<std::unique_ptr<ChangeJournal>> next = ChangeJournal::Adopt(CopyOf(journal.fd()));
  if (!next.ok()) std::abort();
  const ChangeJournal::Outcomes outcomes = (*next)->Recover();
  auto made = outcomes.find(kUnique), begun = outcomes.find(kUnique + 1);
  if (made == outcomes.end() || begun == outcomes.end()) std::abort();
  if (made->second.opcode != Opcode::kMkdir || !made->second.done ||
      made->second.result != -EEXIST || made->second.evidence != 7) {
    std::abort();
  }
  if (begun->second.opcode != Opcode::kUnlink || begun->second.done ||
      begun->second.evidence != 9) {
    std::abort();
  }
}

void FuzzChangeJournal(ConstBytes input) {
  static Sandbox sandbox;
  static int inputs = 0;
  if (input.size() < 3) return;
  const ImageFlaw flaw = FlawOf(std::to_integer<uint8_t>(input[0]));
  const size_t length = std::min<size_t>(
      std::to_integer<size_t>(input[1]) | std::to_integer<size_t>(input[2]) << 8, input.size() - 3);
  const std::vector<std::byte> image(input.begin() + 3, input.begin() + 3 + length);
  absl::StatusOr<std::unique_ptr<ChangeJournal>> journal =
      ChangeJournal::Adopt(MakeKeptImage(ChangeJournal::kBytes, image, flaw));
  if (flaw != ImageFlaw::kNone) {
    if (journal.ok() || (flaw != ImageFlaw::kWriteSealed && !absl::IsDataLoss(journal.status()))) {
      std::abort();
    }
    return;
  }
  if (!journal.ok()) std::abort();
  ChangeJournal::Outcomes outcomes = (*journal)->Recover();
  if (!Same(outcomes, Expected(image))) std::abort();
  if (inputs++ % kInputsPerTree == 0) sandbox.Rebuild();
  Serve(sandbox, **journal, std::move(outcomes), input.subspan(3 + length));
  sandbox.CheckConfined();
  CheckTheNextDaemonFindsNewChanges(**journal);
}

}  // namespace
}  // namespace ringfuse::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A private, exactly-sized copy so that any overread is caught by ASan.
  std::vector<std::byte> copy(size);
  if (size > 0) std::memcpy(copy.data(), data, size);
  ringfuse::fuzz::FuzzChangeJournal(copy);
  return 0;
}
