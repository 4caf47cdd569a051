// What a uring-cmd transport hands to the process that takes its connection over: the ring
// entries it holds, each with the request in it, and the memfds of their buffers.
//
// Why entries and not NOTIFY_RESEND: on 6.18 the kernel resends only what the /dev/fuse
// processing lists hold (fuse_resend in fs/fuse/dev.c walks fc->devices, each fud->pq), never
// what ring entries hold (those requests sit on the ring queue's own fpq, fs/fuse/dev_uring.c).
// And an entry cannot be given back: the kernel cancels a process's free entries when its ring
// or its thread ends (fuse_uring_cancel), and a request handed to an entry at that moment is
// left unanswerable (fuse_uring_send_in_task with IO_URING_F_TASK_DEAD: -ECANCELED, the request
// still on the queue's processing list), a client hung until the connection ends. So the old
// process first lets every entry fill: it stops committing, and makes requests of its own on
// each CPU (an fstatfs of the mount from a thread pinned there) until no entry of its is free.
// Then none can be cancelled with a request in it, and the new process maps the entries'
// buffers at the same addresses (ring_entry_block.h) and commits each held request from its own
// rings, which makes those entries its own: the kernel keeps no owner.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/fd.h"

namespace ringfuse::internal {

// An entry that holds a request, not answered yet or with its reply written there: what its
// buffers show says which (UringQueue::Shows).
struct HandedEntry {
  uint32_t block;   // index into HandedQueue::blocks
  uint32_t slot;    // the entry's place in its block
  uint64_t unique;  // the request's, the commit's id
};

struct HandedBlock {
  uint64_t address;  // where the block is mapped in the old process, and must be in the new one
  uint64_t offset;   // where it starts in its queue's memfd
  uint32_t count;    // entries in it
};

struct HandedQueue {
  std::vector<HandedBlock> blocks;
  std::vector<HandedEntry> entries;
};

struct RingsHandover {
  uint64_t payload_stride = 0;
  std::vector<HandedQueue> queues;  // one per qid
  std::vector<base::UniqueFd> fds;  // each queue's memfd, by qid
};

// The record as bytes; the fds travel beside it, in order.
std::string EncodeRingsHandover(const RingsHandover& rings);
// Refuses a record that ends early, runs on, names a block or slot that is not there or an entry
// twice, or does not come with one memfd per queue.
absl::StatusOr<RingsHandover> DecodeRingsHandover(std::string_view bytes,
                                                  std::vector<base::UniqueFd> fds);

}  // namespace ringfuse::internal
