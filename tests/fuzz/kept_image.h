// The memfd a keeper hands a kept ringfused after a crash (daemon/crash/kept_memory.h), made from
// fuzz input: how the journal fuzzers give a journal bytes the way a daemon gets them.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/fd.h"
#include "ringfuse/bytes.h"

namespace ringfuse::fuzz {

// What is wrong with the memfd as a whole: nothing (most inputs), or what no ringfused of this
// build makes and adoption must refuse: no seals (a holder could shrink it under the daemon),
// another size, or sealed against writing too (it cannot be mapped writable).
enum class ImageFlaw { kNone, kUnsealed, kOtherSize, kWriteSealed };

inline ImageFlaw FlawOf(uint8_t byte) {
  switch (byte % 8) {
    case 5: return ImageFlaw::kUnsealed;
    case 6: return ImageFlaw::kOtherSize;
    case 7: return ImageFlaw::kWriteSealed;
    default: return ImageFlaw::kNone;
  }
}

// A memfd of `bytes` holding `image` from offset 0 (cut at `bytes`) and zeros after. Sparse, as
// a journal's is: only the pages the image covers are there. Sealed against resizing as
// KeptMemory::Create seals it, unless `flaw` says otherwise.
inline base::UniqueFd MakeKeptImage(size_t bytes, ConstBytes image, ImageFlaw flaw) {
  base::UniqueFd memfd(::memfd_create("fuzzed-kept-memory", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!memfd.valid()) std::abort();
  const size_t size = flaw == ImageFlaw::kOtherSize ? bytes + 4096 : bytes;
  if (::ftruncate(memfd.get(), static_cast<off_t>(size)) != 0) std::abort();
  const size_t length = std::min(image.size(), bytes);
  if (length > 0 &&
      ::pwrite(memfd.get(), image.data(), length, 0) != static_cast<ssize_t>(length)) {
    std::abort();
  }
  int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
  if (flaw == ImageFlaw::kUnsealed) seals = 0;
  if (flaw == ImageFlaw::kWriteSealed) seals |= F_SEAL_WRITE;
  if (seals != 0 && ::fcntl(memfd.get(), F_ADD_SEALS, seals) != 0) std::abort();
  return memfd;
}

// A slot journal (daemon/crash/slot_journal.h) scans the first `used` slots of its memfd, a
// header's `used` past the input's slots makes it scan zeros: all of them at most (kSlots, a fifth
// of a second for the node journal's 193 MB). So that most inputs cost milliseconds, such a `used`
// is brought down to one past the input's last whole slot, unless the input's first byte asks for
// it as given (kUsedAsGiven and up); the journal's own bound is then fuzzed too.
inline constexpr uint8_t kUsedAsGiven = 0xf8;

template <typename Slot, typename Header>
void BoundUsed(std::vector<std::byte>& image, uint8_t first_byte) {
  if (first_byte >= kUsedAsGiven) return;
  if (image.size() < sizeof(uint64_t)) image.resize(sizeof(uint64_t));  // zeros, as the memfd's
  const uint64_t slots =
      image.size() < sizeof(Header) ? 0 : (image.size() - sizeof(Header)) / sizeof(Slot);
  uint64_t used;
  std::memcpy(&used, image.data() + offsetof(Header, used), sizeof(used));
  if (used > slots + 1) used = slots + 1;
  std::memcpy(image.data() + offsetof(Header, used), &used, sizeof(used));
}

// Another fd of the same memfd: the keeper's copy, as it hands it to the daemon after this one.
inline base::UniqueFd CopyOf(int memfd) {
  base::UniqueFd copy(::fcntl(memfd, F_DUPFD_CLOEXEC, 0));
  if (!copy.valid()) std::abort();
  return copy;
}

}  // namespace ringfuse::fuzz
