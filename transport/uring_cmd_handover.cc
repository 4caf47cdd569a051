#include "transport/uring_cmd_handover.h"

#include <set>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/reader.h"
#include "base/record_fields.h"

namespace ringfuse::internal {
namespace {

// Far more than any queue has (UringCmdTransport::kMaxEntriesPerQueue), so a count read from a
// corrupt record cannot make us allocate without bound.
constexpr uint32_t kMaxCount = 1 << 16;

absl::Status Corrupt(std::string_view what) {
  return absl::DataLossError("the ring entries handed over by the old process " +
                             std::string(what));
}

bool GetQueue(base::Reader& in, HandedQueue& queue) {
  uint32_t blocks = 0, entries = 0;
  if (!base::GetField(in, blocks) || blocks > kMaxCount) return false;
  queue.blocks.resize(blocks);
  for (HandedBlock& block : queue.blocks) {
    if (!base::GetField(in, block.address) || !base::GetField(in, block.offset) ||
        !base::GetField(in, block.count)) {
      return false;
    }
  }
  if (!base::GetField(in, entries) || entries > kMaxCount) return false;
  queue.entries.resize(entries);
  for (HandedEntry& entry : queue.entries) {
    if (!base::GetField(in, entry.block) || !base::GetField(in, entry.slot) ||
        !base::GetField(in, entry.unique)) {
      return false;
    }
  }
  return true;
}

// Every queue has its memfd, and every entry names a block of its queue and a slot in it.
absl::Status Check(const RingsHandover& rings) {
  if (rings.fds.size() != rings.queues.size()) {
    return Corrupt(absl::StrFormat("came with %u memfds for %u queues", rings.fds.size(),
                                   rings.queues.size()));
  }
  for (const HandedQueue& queue : rings.queues) {
    std::set<std::pair<uint32_t, uint32_t>> seen;
    for (const HandedEntry& entry : queue.entries) {
      if (entry.block >= queue.blocks.size() || entry.slot >= queue.blocks[entry.block].count) {
        return Corrupt("name an entry outside their blocks");
      }
      if (!seen.emplace(entry.block, entry.slot).second) return Corrupt("name an entry twice");
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string EncodeRingsHandover(const RingsHandover& rings) {
  std::string out;
  base::PutField(out, rings.payload_stride);
  base::PutField(out, static_cast<uint32_t>(rings.queues.size()));
  for (const HandedQueue& queue : rings.queues) {
    base::PutField(out, static_cast<uint32_t>(queue.blocks.size()));
    for (const HandedBlock& block : queue.blocks) {
      base::PutField(out, block.address);
      base::PutField(out, block.offset);
      base::PutField(out, block.count);
    }
    base::PutField(out, static_cast<uint32_t>(queue.entries.size()));
    for (const HandedEntry& entry : queue.entries) {
      base::PutField(out, entry.block);
      base::PutField(out, entry.slot);
      base::PutField(out, entry.unique);
    }
  }
  return out;
}

absl::StatusOr<RingsHandover> DecodeRingsHandover(std::string_view bytes,
                                                  std::vector<base::UniqueFd> fds) {
  base::Reader in(ConstBytes(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()));
  RingsHandover rings;
  rings.fds = std::move(fds);
  uint32_t queues = 0;
  if (!base::GetField(in, rings.payload_stride) || !base::GetField(in, queues) ||
      queues > kMaxCount) {
    return Corrupt("end early");
  }
  rings.queues.resize(queues);
  for (HandedQueue& queue : rings.queues) {
    if (!GetQueue(in, queue)) return Corrupt("end early");
  }
  if (in.remaining() != 0) return Corrupt("run on past their last field");
  if (absl::Status checked = Check(rings); !checked.ok()) return checked;
  return rings;
}

}  // namespace ringfuse::internal
