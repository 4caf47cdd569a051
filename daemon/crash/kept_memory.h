// Memory a kept ringfused's crash cannot reach (ringfuse/keeper.h): a memfd that the keeper
// holds too, mapped shared, so that what the daemon stores in it is there for the daemon the
// keeper starts after the crash, which maps the same memfd. The journals (slot_journal.h,
// change_journal.h) live in such memory.
//
// Its size is sealed (F_SEAL_SHRINK, F_SEAL_GROW, and F_SEAL_SEAL so that no holder lifts them):
// the keeper and any process it hands the memfd to hold it too, and a holder that shrank it
// would make the daemon's next access past the new end SIGBUS. A memfd adopted without those
// seals is refused: no ringfused of this build made it.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "base/errno_status.h"
#include "base/fd.h"

namespace ringfuse::daemon {

// The name `memfd` was created with (memfd_create's first argument), from its /proc/self/fd link
// ("/memfd:NAME (deleted)"); nothing for an fd that is no memfd.
inline std::optional<std::string> MemfdName(int memfd) {
  constexpr std::string_view kPrefix = "/memfd:";
  constexpr std::string_view kSuffix = " (deleted)";
  char link[512];  // "/memfd:" a name of at most 249 bytes " (deleted)"
  const ssize_t size =
      ::readlink(("/proc/self/fd/" + std::to_string(memfd)).c_str(), link, sizeof(link));
  if (size <= 0 || static_cast<size_t>(size) == sizeof(link)) return std::nullopt;
  std::string_view target(link, static_cast<size_t>(size));
  if (!target.starts_with(kPrefix) || !target.ends_with(kSuffix)) return std::nullopt;
  target.remove_prefix(kPrefix.size());
  target.remove_suffix(kSuffix.size());
  return std::string(target);
}

class KeptMemory {
 public:
  // A new memfd named `name` of `bytes`, zeroed (and sparse: a page is only there once written).
  static absl::StatusOr<KeptMemory> Create(const char* name, size_t bytes) {
    base::UniqueFd memfd(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!memfd.valid()) return base::ErrnoStatus(errno, std::string("memfd_create ") + name);
    if (::ftruncate(memfd.get(), static_cast<off_t>(bytes)) != 0) {
      return base::ErrnoStatus(errno, std::string("sizing ") + name);
    }
    if (::fcntl(memfd.get(), F_ADD_SEALS, kSizeSeals) != 0) {
      return base::ErrnoStatus(errno, std::string("sealing ") + name);
    }
    return Map(std::move(memfd), bytes);
  }
  // The memory a dead daemon kept in `memfd`; DataLoss for a memfd of another size or unsealed,
  // which no ringfused of this build wrote. `what` names it in that error.
  static absl::StatusOr<KeptMemory> Adopt(base::UniqueFd memfd, size_t bytes, const char* what) {
    struct stat attr {};
    if (::fstat(memfd.get(), &attr) != 0 || static_cast<size_t>(attr.st_size) != bytes) {
      return absl::DataLossError(std::string("the kept ") + what +
                                 " is not one this ringfused wrote");
    }
    if (const int seals = ::fcntl(memfd.get(), F_GET_SEALS);
        seals < 0 || (seals & kSizeSeals) != kSizeSeals) {
      return absl::DataLossError(std::string("the kept ") + what +
                                 " is not sealed against resizing");
    }
    return Map(std::move(memfd), bytes);
  }

  KeptMemory(KeptMemory&& other) noexcept
      : memfd_(std::move(other.memfd_)),
        address_(std::exchange(other.address_, nullptr)),
        bytes_(other.bytes_) {}
  KeptMemory& operator=(KeptMemory&&) = delete;
  ~KeptMemory() {
    if (address_ != nullptr) ::munmap(address_, bytes_);
  }

  int fd() const { return memfd_.get(); }
  void* address() const { return address_; }

 private:
  KeptMemory(base::UniqueFd memfd, void* address, size_t bytes)
      : memfd_(std::move(memfd)), address_(address), bytes_(bytes) {}

  static constexpr int kSizeSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

  static absl::StatusOr<KeptMemory> Map(base::UniqueFd memfd, size_t bytes) {
    void* address = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd.get(), 0);
    if (address == MAP_FAILED) return base::ErrnoStatus(errno, "mapping kept memory");
    return KeptMemory(std::move(memfd), address, bytes);
  }

  base::UniqueFd memfd_;
  void* address_;
  size_t bytes_;
};

}  // namespace ringfuse::daemon
