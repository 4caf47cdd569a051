#include "daemon/crash/open_file_journal.h"

#include <cstring>

namespace ringfuse::daemon {

absl::StatusOr<std::unique_ptr<OpenFileJournal>> OpenFileJournal::Create() {
  absl::StatusOr<std::unique_ptr<Slots>> slots = Slots::Create(kMemfdName);
  if (!slots.ok()) return slots.status();
  return std::unique_ptr<OpenFileJournal>(new OpenFileJournal(std::move(*slots)));
}

absl::StatusOr<std::unique_ptr<OpenFileJournal>> OpenFileJournal::Adopt(base::UniqueFd memfd) {
  absl::StatusOr<std::unique_ptr<Slots>> slots =
      Slots::Adopt(std::move(memfd), "open-file journal");
  if (!slots.ok()) return slots.status();
  return std::unique_ptr<OpenFileJournal>(new OpenFileJournal(std::move(*slots)));
}

void OpenFileJournal::Opened(uint64_t fh, uint64_t nodeid, std::string_view handle, int flags) {
  if (handle.empty() || handle.size() > kMaxHandle) return;
  slots_->Write(fh, [&](Slot& slot) {
    slot.flags = flags;
    slot.nodeid = nodeid;
    slot.handle_size = static_cast<uint32_t>(handle.size());
    std::memcpy(slot.handle, handle.data(), handle.size());
  });
}

std::vector<OpenFileJournal::Entry> OpenFileJournal::Recover() {
  std::vector<Entry> entries;
  slots_->Recover([&](const Slot& slot) {
    if (slot.handle_size > kMaxHandle) return false;
    entries.push_back(
        {slot.key, slot.nodeid, slot.flags, std::string(slot.handle, slot.handle_size)});
    return true;
  });
  return entries;
}

}  // namespace ringfuse::daemon
