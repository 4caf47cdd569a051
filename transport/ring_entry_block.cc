#include "transport/ring_entry_block.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/errno_status.h"
#include "ringfuse/protocol/frames.h"

namespace ringfuse::internal {
namespace {

constexpr size_t kPage = 4096;

size_t RoundUp(size_t size, size_t unit) { return (size + unit - 1) / unit * unit; }

// Blocks go from here on, a random number of GiB further (blocks of one process one after the
// other): far below where the kernel puts a new process's libraries, stacks and mappings (at the
// top of the 47-bit address space) and far above its program and heap (at 0x55... for a PIE),
// so the process that takes the blocks over finds their addresses free. A machine with a
// smaller address space refuses these addresses, and the kernel then places blocks itself.
constexpr uintptr_t kRegionStart = uintptr_t{0x2000} << 32;
constexpr uintptr_t kRegionSpread = uintptr_t{1} << 40;
constexpr uintptr_t kGiB = uintptr_t{1} << 30;

uintptr_t RegionCursorStart() {
  std::random_device random;
  return kRegionStart +
         (std::uniform_int_distribution<uintptr_t>(0, kRegionSpread / kGiB)(random) * kGiB);
}

// Where the next block of this process goes.
std::atomic<uintptr_t>& RegionCursor() {
  static std::atomic<uintptr_t> cursor{RegionCursorStart()};
  return cursor;
}

void* MapShared(void* address, size_t size, int memfd, off_t offset, int extra_flags) {
  return ::mmap(address, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE | extra_flags,
                memfd, offset);
}

// ThreadSanitizer keeps that part of the address space for its shadow and kills a process that
// maps there: under it, blocks go wherever the kernel puts them (a handover within one process,
// as the tests make, still finds them; one to another process may find an address taken).
#if defined(__SANITIZE_THREAD__)
constexpr bool kRegionUsable = false;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kRegionUsable = false;
#else
constexpr bool kRegionUsable = true;
#endif
#else
constexpr bool kRegionUsable = true;
#endif

// In the region if it can be, else wherever the kernel likes.
void* PlaceBlock(size_t size, int memfd, off_t offset) {
  if (!kRegionUsable) return MapShared(nullptr, size, memfd, offset, 0);
  constexpr int kTries = 8;
  for (int i = 0; i < kTries; ++i) {
    const uintptr_t at = RegionCursor().fetch_add(RoundUp(size, kGiB));
    void* mapped = MapShared(reinterpret_cast<void*>(at), size, memfd, offset, MAP_FIXED_NOREPLACE);
    if (mapped != MAP_FAILED) return mapped;
    if (errno != EEXIST) break;  // ENOMEM: beyond this machine's address space
  }
  return MapShared(nullptr, size, memfd, offset, 0);
}

bool SameFile(int a, int b) {
  struct stat first, second;
  return ::fstat(a, &first) == 0 && ::fstat(b, &second) == 0 && first.st_dev == second.st_dev &&
         first.st_ino == second.st_ino;
}

}  // namespace

absl::StatusOr<std::shared_ptr<EntryFile>> EntryFile::Create() {
  base::UniqueFd memfd(::memfd_create("ringfuse-ring-entries", MFD_CLOEXEC));
  if (!memfd.valid()) return base::ErrnoStatus(errno, "memfd_create for ring entries");
  return std::make_shared<EntryFile>(std::move(memfd), 0);
}

absl::StatusOr<std::shared_ptr<EntryFile>> EntryFile::Adopt(base::UniqueFd memfd) {
  struct stat status;
  if (::fstat(memfd.get(), &status) != 0)
    return base::ErrnoStatus(errno, "fstat of ring entries' memfd");
  return std::make_shared<EntryFile>(std::move(memfd), status.st_size);
}

absl::StatusOr<off_t> EntryFile::Extend(size_t size) {
  const off_t start = size_;
  if (::ftruncate(memfd_.get(), start + static_cast<off_t>(size)) != 0) {
    return base::ErrnoStatus(errno, "growing the memfd of ring entries");
  }
  size_ = start + static_cast<off_t>(size);
  return start;
}

// One mapping of part of an EntryFile, and the process-wide list of them by address: a session
// taking over from another in this process finds its blocks mapped already, and shares them.
class EntryBlock::Mapping {
 public:
  Mapping(std::shared_ptr<EntryFile> file, off_t offset, std::byte* base, size_t size)
      : file_(std::move(file)), offset_(offset), base_(base), size_(size) {}
  ~Mapping() {
    {
      std::lock_guard lock(RegistryMutex());
      Registry().erase(address());
    }
    ::munmap(base_, size_);
  }

  static std::shared_ptr<Mapping> Register(std::shared_ptr<EntryFile> file, off_t offset,
                                           void* base, size_t size) {
    auto mapping =
        std::make_shared<Mapping>(std::move(file), offset, static_cast<std::byte*>(base), size);
    std::lock_guard lock(RegistryMutex());
    Registry()[mapping->address()] = mapping;
    return mapping;
  }
  // This process's mapping at `address`, if it is of the same part of the same file.
  static std::shared_ptr<Mapping> Find(uintptr_t address, const EntryFile& file, off_t offset,
                                       size_t size) {
    std::lock_guard lock(RegistryMutex());
    auto found = Registry().find(address);
    if (found == Registry().end()) return nullptr;
    std::shared_ptr<Mapping> mapping = found->second.lock();
    if (mapping == nullptr || mapping->offset_ != offset || mapping->size_ != size ||
        !SameFile(mapping->file_->fd(), file.fd())) {
      return nullptr;
    }
    return mapping;
  }

  std::byte* base() const { return base_; }
  uintptr_t address() const { return reinterpret_cast<uintptr_t>(base_); }
  off_t offset() const { return offset_; }

 private:
  static std::mutex& RegistryMutex() {
    static std::mutex mutex;
    return mutex;
  }
  static std::map<uintptr_t, std::weak_ptr<Mapping>>& Registry() {
    static auto* registry = new std::map<uintptr_t, std::weak_ptr<Mapping>>;
    return *registry;
  }

  std::shared_ptr<EntryFile> file_;
  off_t offset_;
  std::byte* base_;
  size_t size_;
};

size_t EntryBlock::StrideFor(size_t size) { return RoundUp(size, kPage); }

// Checked: a handed-over count or stride near 2^64 would wrap the sum round to a small size that
// passes MapAt's bounds check, and the entries would then lie past the mapping.
std::optional<size_t> EntryBlock::SizeFor(size_t count, size_t payload_stride) {
  size_t headers, payloads, size;
  if (__builtin_mul_overflow(count, sizeof(wire::UringReqHeader), &headers) ||
      headers > std::numeric_limits<size_t>::max() - kPage ||
      __builtin_mul_overflow(count, payload_stride, &payloads) ||
      __builtin_add_overflow(RoundUp(headers, kPage), payloads, &size) ||
      size > static_cast<size_t>(std::numeric_limits<off_t>::max())) {
    return std::nullopt;
  }
  return size;
}

absl::StatusOr<EntryBlock> EntryBlock::Create(std::shared_ptr<EntryFile> file, size_t count,
                                              size_t payload_stride) {
  const std::optional<size_t> checked = SizeFor(count, payload_stride);
  if (!checked) return absl::InvalidArgumentError("ring entries too large to map");
  const size_t size = *checked;
  absl::StatusOr<off_t> offset = file->Extend(size);
  if (!offset.ok()) return offset.status();
  void* mapped = PlaceBlock(size, file->fd(), *offset);
  if (mapped == MAP_FAILED) return base::ErrnoStatus(errno, "mmap of ring entries");
  return EntryBlock(Mapping::Register(std::move(file), *offset, mapped, size), count,
                    payload_stride);
}

absl::StatusOr<EntryBlock> EntryBlock::MapAt(std::shared_ptr<EntryFile> file, uint64_t offset,
                                             uintptr_t address, size_t count,
                                             size_t payload_stride) {
  const std::optional<size_t> checked = SizeFor(count, payload_stride);
  if (!checked || offset > static_cast<uint64_t>(std::numeric_limits<off_t>::max())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the handed-over ring entries (%u entries of %u-byte payloads at offset %u) cannot be "
        "mapped: their size overflows",
        count, payload_stride, offset));
  }
  const size_t size = *checked;
  const off_t start = static_cast<off_t>(offset);
  if (std::shared_ptr<Mapping> mine = Mapping::Find(address, *file, start, size)) {
    return EntryBlock(std::move(mine), count, payload_stride);
  }
  if (offset > static_cast<uint64_t>(file->size()) ||
      file->size() - start < static_cast<off_t>(size)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the ring entries' memfd has no %u bytes of %u entries at offset %u", size, count, offset));
  }
  void* mapped =
      MapShared(reinterpret_cast<void*>(address), size, file->fd(), start, MAP_FIXED_NOREPLACE);
  if (mapped == MAP_FAILED) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot map the old process's ring entries at 0x%x (%u bytes) in this one: %s", address,
        size, std::strerror(errno)));
  }
  if (reinterpret_cast<uintptr_t>(mapped) != address) {  // a kernel that took the address as a hint
    ::munmap(mapped, size);
    return absl::FailedPreconditionError(
        absl::StrFormat("cannot map the old process's ring entries at 0x%x in this one", address));
  }
  return EntryBlock(Mapping::Register(std::move(file), start, mapped, size), count, payload_stride);
}

EntryBlock::EntryBlock(std::shared_ptr<Mapping> mapping, size_t count, size_t payload_stride)
    : mapping_(std::move(mapping)),
      count_(count),
      payload_stride_(payload_stride),
      headers_size_(RoundUp(count * sizeof(wire::UringReqHeader), kPage)) {}

std::byte* EntryBlock::base() const { return mapping_->base(); }
uint64_t EntryBlock::offset() const { return static_cast<uint64_t>(mapping_->offset()); }

}  // namespace ringfuse::internal
