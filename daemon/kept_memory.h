// Memory a kept ringfused's crash cannot reach (ringfuse/keeper.h): a memfd that the keeper
// holds too, mapped shared, so that what the daemon stores in it is there for the daemon the
// keeper starts after the crash, which maps the same memfd. The journals (slot_journal.h,
// change_journal.h) live in such memory.
#pragma once

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "transport/errno_status.h"
#include "transport/fd.h"

namespace ringfuse::daemon {

class KeptMemory {
 public:
  // A new memfd named `name` of `bytes`, zeroed (and sparse: a page is only there once written).
  static absl::StatusOr<KeptMemory> Create(const char* name, size_t bytes) {
    internal::UniqueFd memfd(::memfd_create(name, MFD_CLOEXEC));
    if (!memfd.valid()) return internal::ErrnoStatus(errno, std::string("memfd_create ") + name);
    if (::ftruncate(memfd.get(), static_cast<off_t>(bytes)) != 0) {
      return internal::ErrnoStatus(errno, std::string("sizing ") + name);
    }
    return Map(std::move(memfd), bytes);
  }
  // The memory a dead daemon kept in `memfd`; DataLoss for a memfd of another size, which no
  // ringfused of this build wrote. `what` names it in that error.
  static absl::StatusOr<KeptMemory> Adopt(internal::UniqueFd memfd, size_t bytes,
                                          const char* what) {
    struct stat attr {};
    if (::fstat(memfd.get(), &attr) != 0 || static_cast<size_t>(attr.st_size) != bytes) {
      return absl::DataLossError(std::string("the kept ") + what +
                                 " is not one this ringfused wrote");
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
  KeptMemory(internal::UniqueFd memfd, void* address, size_t bytes)
      : memfd_(std::move(memfd)), address_(address), bytes_(bytes) {}

  static absl::StatusOr<KeptMemory> Map(internal::UniqueFd memfd, size_t bytes) {
    void* address = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd.get(), 0);
    if (address == MAP_FAILED) return internal::ErrnoStatus(errno, "mapping kept memory");
    return KeptMemory(std::move(memfd), address, bytes);
  }

  internal::UniqueFd memfd_;
  void* address_;
  size_t bytes_;
};

}  // namespace ringfuse::daemon
