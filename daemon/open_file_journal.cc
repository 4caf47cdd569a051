#include "daemon/open_file_journal.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "transport/errno_status.h"

namespace ringfuse::daemon {

namespace {

constexpr uint32_t kValid = 0x52464f46;  // "RFOF"
constexpr size_t kBytes =
    sizeof(OpenFileJournal::Header) + OpenFileJournal::kSlots * sizeof(OpenFileJournal::Slot);

std::atomic_ref<uint32_t> StateOf(uint32_t& state) { return std::atomic_ref<uint32_t>(state); }
std::atomic_ref<uint64_t> UsedOf(OpenFileJournal::Header& header) {
  return std::atomic_ref<uint64_t>(header.used);
}

}  // namespace

absl::StatusOr<OpenFileJournal::Header*> OpenFileJournal::Map(int memfd) {
  void* memory = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  if (memory == MAP_FAILED) return internal::ErrnoStatus(errno, "mapping the open-file journal");
  return static_cast<Header*>(memory);
}

absl::StatusOr<std::unique_ptr<OpenFileJournal>> OpenFileJournal::Create() {
  internal::UniqueFd memfd(::memfd_create("ringfused-open-files", MFD_CLOEXEC));
  if (!memfd.valid()) return internal::ErrnoStatus(errno, "memfd_create for the open files");
  // Sparse: a page is only there once a record is written to it.
  if (::ftruncate(memfd.get(), static_cast<off_t>(kBytes)) != 0) {
    return internal::ErrnoStatus(errno, "sizing the open-file journal");
  }
  absl::StatusOr<Header*> mapped = Map(memfd.get());
  if (!mapped.ok()) return mapped.status();
  return std::unique_ptr<OpenFileJournal>(new OpenFileJournal(std::move(memfd), *mapped));
}

absl::StatusOr<std::unique_ptr<OpenFileJournal>> OpenFileJournal::Adopt(internal::UniqueFd memfd) {
  struct stat attr {};
  if (::fstat(memfd.get(), &attr) != 0 || static_cast<size_t>(attr.st_size) != kBytes) {
    return absl::DataLossError("the kept open-file journal is not one this ringfused wrote");
  }
  absl::StatusOr<Header*> mapped = Map(memfd.get());
  if (!mapped.ok()) return mapped.status();
  return std::unique_ptr<OpenFileJournal>(new OpenFileJournal(std::move(memfd), *mapped));
}

OpenFileJournal::OpenFileJournal(internal::UniqueFd memfd, Header* header)
    : memfd_(std::move(memfd)), header_(header), slots_(reinterpret_cast<Slot*>(header + 1)) {}

OpenFileJournal::~OpenFileJournal() { ::munmap(header_, kBytes); }

void OpenFileJournal::Opened(uint64_t fh, uint64_t nodeid, std::string_view handle, int flags) {
  if (handle.empty() || handle.size() > kMaxHandle) return;
  absl::MutexLock lock(&mutex_);
  size_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else if (next_unused_ < kSlots) {
    index = next_unused_++;
    UsedOf(*header_).store(next_unused_, std::memory_order_release);  // before the slot is valid
  } else {
    return;
  }
  Slot& slot = slots_[index];
  slot.flags = flags;
  slot.fh = fh;
  slot.nodeid = nodeid;
  slot.handle_size = static_cast<uint32_t>(handle.size());
  std::memcpy(slot.handle, handle.data(), handle.size());
  StateOf(slot.state).store(kValid, std::memory_order_release);
  slot_of_[fh] = index;
}

void OpenFileJournal::Released(uint64_t fh) {
  absl::MutexLock lock(&mutex_);
  auto found = slot_of_.find(fh);
  if (found == slot_of_.end()) return;
  StateOf(slots_[found->second].state).store(0, std::memory_order_release);
  free_.push_back(found->second);
  slot_of_.erase(found);
}

std::vector<OpenFileJournal::Entry> OpenFileJournal::Recover() {
  absl::MutexLock lock(&mutex_);
  std::vector<Entry> entries;
  slot_of_.clear();
  free_.clear();
  next_unused_ = 0;
  const size_t used = std::min<uint64_t>(UsedOf(*header_).load(std::memory_order_acquire), kSlots);
  for (size_t index = 0; index < used; ++index) {
    Slot& slot = slots_[index];
    if (StateOf(slot.state).load(std::memory_order_acquire) != kValid ||
        slot.handle_size > kMaxHandle || slot_of_.contains(slot.fh)) {
      free_.push_back(index);
      continue;
    }
    entries.push_back(
        {slot.fh, slot.nodeid, slot.flags, std::string(slot.handle, slot.handle_size)});
    slot_of_[slot.fh] = index;
    next_unused_ = index + 1;
  }
  // Slots past the last record are handed out from next_unused_ on, not from free_.
  std::erase_if(free_, [this](size_t index) { return index >= next_unused_; });
  UsedOf(*header_).store(next_unused_, std::memory_order_release);
  return entries;
}

}  // namespace ringfuse::daemon
