// The buffers of FUSE-over-io_uring ring entries, in memory that another process can map at the
// same address.
//
// The kernel remembers an entry's two buffers as addresses, taken from its REGISTER, and copies
// every later request and reply through them in whichever process commits the entry:
// fs/fuse/dev_uring.c keeps no owner (fuse_uring_commit_fetch finds the entry by the request's
// unique, and copy_to_user/copy_from_user act on the committing task's memory). So a process
// that takes a connection over can answer the requests that the old one's entries hold, and keep
// those entries, if it maps the very same pages at the very same addresses: hence a memfd, and a
// place chosen where a freshly started process has nothing (uring_cmd_handover.h).
//
// A queue's blocks are carved from one memfd (an EntryFile), so that a queue costs one fd however
// many entries it grows to. A block is `count` entries: their 288-byte headers first, padded to
// a page, then one payload buffer each, `payload_stride` bytes apart. Nothing is touched until
// the kernel writes there: an entry costs resident memory only for the bytes requests use.
//
// Within one process (a handover between two sessions of it) a block is already mapped where it
// must be: the new session's block shares that mapping, which goes with the last of them.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "base/fd.h"
#include "ringfuse/protocol/frames.h"
#include "ringfuse/wire.h"

namespace ringfuse::internal {

// The memfd of one queue's blocks.
class EntryFile {
 public:
  static absl::StatusOr<std::shared_ptr<EntryFile>> Create();
  // Another process's, which goes on growing here.
  static absl::StatusOr<std::shared_ptr<EntryFile>> Adopt(base::UniqueFd memfd);

  EntryFile(base::UniqueFd memfd, off_t size) : memfd_(std::move(memfd)), size_(size) {}
  int fd() const { return memfd_.get(); }
  off_t size() const { return size_; }
  // Grows the file by `size` bytes; where the new bytes start.
  absl::StatusOr<off_t> Extend(size_t size);

 private:
  base::UniqueFd memfd_;
  off_t size_;
};

class EntryBlock {
 public:
  // A new block at the end of `file`, mapped in the region a new process leaves free.
  static absl::StatusOr<EntryBlock> Create(std::shared_ptr<EntryFile> file, size_t count,
                                           size_t payload_stride);
  // Another process's block, `offset` bytes into `file`, mapped at `address` (its address
  // there); FailedPrecondition when something of this process's already occupies any of it.
  static absl::StatusOr<EntryBlock> MapAt(std::shared_ptr<EntryFile> file, uint64_t offset,
                                          uintptr_t address, size_t count, size_t payload_stride);
  // The payload stride for a payload of `size` bytes: whole pages, so payloads stay aligned.
  static size_t StrideFor(size_t size);

  wire::UringReqHeader* header(size_t slot) const {
    return reinterpret_cast<wire::UringReqHeader*>(base()) + slot;
  }
  std::byte* payload(size_t slot) const { return base() + headers_size_ + slot * payload_stride_; }
  size_t count() const { return count_; }
  uintptr_t address() const { return reinterpret_cast<uintptr_t>(base()); }
  uint64_t offset() const;

  class Mapping;

 private:
  EntryBlock(std::shared_ptr<Mapping> mapping, size_t count, size_t payload_stride);
  // The block's bytes, or nothing where they overflow size_t or off_t.
  static std::optional<size_t> SizeFor(size_t count, size_t payload_stride);
  std::byte* base() const;

  std::shared_ptr<Mapping> mapping_;
  size_t count_;
  size_t payload_stride_;
  size_t headers_size_;
};

}  // namespace ringfuse::internal
