// Inodes of the fuzzers' scratch tree (fuzz_sandbox.h) that a fuzzed record may name by a tag
// instead of by a handle. A file handle holds a mount id and a generation number of one mount of
// one machine, which no seed file can hold; a tag names the inode, and the fuzzer writes that
// inode's handle in its place before the code under test reads the record.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/fd.h"
#include "daemon/inodes/inode_handle.h"
#include "tests/fuzz/fuzz_sandbox.h"

namespace ringfuse::fuzz {

struct ScratchInode {
  std::string handle;  // as InodeHandles::HandleOf gives it: what a journal records
  dev_t dev;
  ino_t ino;
};

// In the order tags name them: in source its root, file, dir, dir/inner, fifo and the symlink
// outfile; outside source (no record of the daemon's may name these) the canary's secret and dir.
inline std::vector<ScratchInode> ScratchInodes(const Sandbox& sandbox,
                                               daemon::InodeHandles& handles) {
  const std::filesystem::path paths[] = {sandbox.source(),
                                         sandbox.source() / "file",
                                         sandbox.source() / "dir",
                                         sandbox.source() / "dir" / "inner",
                                         sandbox.source() / "fifo",
                                         sandbox.source() / "outfile",
                                         sandbox.canary() / "secret",
                                         sandbox.canary() / "dir"};
  std::vector<ScratchInode> inodes;
  for (const std::filesystem::path& path : paths) {
    base::UniqueFd fd(::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0) std::abort();
    inodes.push_back({handles.HandleOf(fd.get()), st.st_dev, st.st_ino});
  }
  return inodes;
}

// A slot journal record (daemon/crash/slot_journal.h) whose handle_size is kScratchTag + i (i <
// 256) names scratch inode i (modulo their number): its handle and handle_size become that inode's,
// and in a node journal record its dev and ino too, where both are 0 (else they stay, and name
// another inode than the handle does).
inline constexpr uint32_t kScratchTag = 0x52480000;  // "RH" in the high half

template <typename Slot>
void Untag(Slot& slot, const std::vector<ScratchInode>& inodes) {
  if ((slot.handle_size & 0xffffff00) != kScratchTag) return;
  const ScratchInode& inode = inodes[(slot.handle_size & 0xff) % inodes.size()];
  if (inode.handle.size() > sizeof(slot.handle)) std::abort();
  slot.handle_size = static_cast<uint32_t>(inode.handle.size());
  std::memcpy(slot.handle, inode.handle.data(), inode.handle.size());
  if constexpr (requires { slot.dev; }) {
    if (slot.dev == 0 && slot.ino == 0) {
      slot.dev = inode.dev;
      slot.ino = inode.ino;
    }
  }
}

// Untags every whole slot in `image`: a slot journal's memory from its header on.
template <typename Slot, typename Header>
void UntagSlots(std::vector<std::byte>& image, const std::vector<ScratchInode>& inodes) {
  for (size_t at = sizeof(Header); at + sizeof(Slot) <= image.size(); at += sizeof(Slot)) {
    Slot slot;
    std::memcpy(&slot, image.data() + at, sizeof(slot));
    Untag(slot, inodes);
    std::memcpy(image.data() + at, &slot, sizeof(slot));
  }
}

}  // namespace ringfuse::fuzz
