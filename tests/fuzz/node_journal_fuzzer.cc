// libFuzzer target over the node journal a kept ringfused finds after a crash
// (daemon/crash/node_journal.h): the memfd the keeper hands it, made from the input, adopted,
// recovered and restored into an inode table as RecoverAfterCrash (daemon/main.cc) does, and then
// served from while the table records its nodes in it.
//
// Input: one byte (what may be wrong with the memfd as a whole, kept_image.h), then the memfd's
// bytes from offset 0: the header (used, unrecorded) and slots; the rest of the memfd is zeros. A
// slot may name an inode of the scratch tree by a tag instead of a handle (scratch_inodes.h); a
// `used` past the input's slots is brought down to them unless the first byte says otherwise
// (BoundUsed, kept_image.h: a scan of the whole 193 MB journal takes a fifth of a second).
//
// Whatever the bytes: a memfd no ringfused made is refused with DataLoss, any other recovered
// without a crash; every node recovered has a handle of 1 to kMaxHandle bytes and an id that is
// not the root's, none twice; the recovery is complete exactly when the dead daemon counted no
// node it could not record; the journal then holds exactly the nodes recovered, and counts
// nothing unrecorded. The table takes them (a record no daemon could write costs that node, never
// the recovery), with no node id 0 and none at 2^62 or beyond; a node made after gets an id above
// every restored one. And as the table serves on (nodes reopened, names looked up, lookups
// forgotten), the journal never knows fewer nodes or lookups than the table: a copy adopted then
// recovers every node of the table with its lookup count, and no node the table dropped.
#include <fcntl.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "daemon/crash/node_journal.h"
#include "daemon/inodes/inode_table.h"
#include "tests/fuzz/fuzz_sandbox.h"
#include "tests/fuzz/kept_image.h"
#include "tests/fuzz/scratch_inodes.h"

namespace ringfuse::fuzz {
namespace {

using daemon::InodeTable;
using daemon::NodeJournal;
using daemon::SavedNode;

constexpr size_t kJournalBytes =
    sizeof(daemon::SlotJournalHeader) + NodeJournal::kSlots * sizeof(NodeJournal::Slot);
// Node ids from here on are none a journal may hold (IsRecordableNodeId, inode_table_handover.cc).
constexpr uint64_t kFirstImpossibleId = uint64_t{1} << 62;
// How many restored nodes are reopened and forgotten after the recovery.
constexpr size_t kNodesServed = 16;

// The scratch tree, made once: nothing here changes it.
struct Scratch {
  Scratch() {
    sandbox.Rebuild();
    InodeTable table(OpenSource());
    inodes = ScratchInodes(sandbox, table.handles());
  }
  base::UniqueFd OpenSource() const {
    return base::UniqueFd(::open(sandbox.source().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }
  Sandbox sandbox;
  std::vector<ScratchInode> inodes;
};

std::unique_ptr<NodeJournal> Adopt(base::UniqueFd memfd) {
  absl::StatusOr<std::unique_ptr<NodeJournal>> journal = NodeJournal::Adopt(std::move(memfd));
  if (!journal.ok()) std::abort();
  return std::move(*journal);
}

std::map<uint64_t, const SavedNode*> ById(const std::vector<SavedNode>& nodes) {
  std::map<uint64_t, const SavedNode*> by_id;
  for (const SavedNode& node : nodes) by_id[node.nodeid] = &node;
  return by_id;
}

bool SameRecord(const SavedNode& a, const SavedNode& b) {
  return a.nodeid == b.nodeid && a.dev == b.dev && a.ino == b.ino && a.type == b.type &&
         a.handle == b.handle && a.lookups == b.lookups;
}

void CheckRecovery(const NodeJournal::Recovery& recovery, uint64_t unrecorded) {
  if (recovery.complete != (unrecorded == 0)) std::abort();
  if (recovery.nodes.size() > NodeJournal::kSlots) std::abort();
  std::set<uint64_t> ids;
  for (const SavedNode& node : recovery.nodes) {
    if (node.handle.empty() || node.handle.size() > NodeJournal::kMaxHandle) std::abort();
    if (node.nodeid == InodeTable::kRootNodeId || !ids.insert(node.nodeid).second) std::abort();
  }
}

// The journal holds exactly what it gave, and the dead daemon's unrecorded nodes are gone.
void CheckJournalHoldsTheRecovery(int memfd, const NodeJournal::Recovery& recovery) {
  const NodeJournal::Recovery again = Adopt(CopyOf(memfd))->Recover();
  if (!again.complete || again.nodes.size() != recovery.nodes.size()) std::abort();
  const std::map<uint64_t, const SavedNode*> recovered = ById(recovery.nodes);
  for (const SavedNode& node : again.nodes) {
    auto found = recovered.find(node.nodeid);
    if (found == recovered.end() || !SameRecord(node, *found->second)) std::abort();
  }
}

// Every node of the table is the root or a recovered node with its lookup count; none has an id
// a journal may not hold.
void CheckRestored(const daemon::SavedTable& table, const NodeJournal::Recovery& recovery) {
  const std::map<uint64_t, const SavedNode*> recovered = ById(recovery.nodes);
  for (const SavedNode& node : table.nodes) {
    if (node.nodeid == InodeTable::kRootNodeId) continue;
    if (node.nodeid == 0 || node.nodeid >= kFirstImpossibleId) std::abort();
    auto found = recovered.find(node.nodeid);
    if (found == recovered.end() || found->second->lookups != node.lookups) std::abort();
  }
}

// What a daemon does next: requests reach restored nodes, look names up (finding restored nodes
// or making new ones) and forget. Returns the ids of the table's nodes before any was forgotten.
std::set<uint64_t> Serve(InodeTable& table, const std::vector<uint64_t>& restored) {
  const uint64_t highest = restored.empty() ? InodeTable::kRootNodeId
                                            : *std::max_element(restored.begin(), restored.end());
  const auto looked_up = [&](uint64_t parent, const char* name) -> uint64_t {
    daemon::Found found;
    if (!table.Lookup(parent, name, found).ok()) return 0;
    const uint64_t id = found.inode->nodeid;
    const bool is_restored = std::find(restored.begin(), restored.end(), id) != restored.end();
    if (id <= InodeTable::kRootNodeId || (!is_restored && id <= highest)) std::abort();
    return id;
  };
  const size_t served = std::min(restored.size(), kNodesServed);
  for (size_t i = 0; i < served; ++i) table.Get(restored[i]).ok();
  for (const char* name : {"file", "fifo", "outfile"}) looked_up(InodeTable::kRootNodeId, name);
  if (const uint64_t dir = looked_up(InodeTable::kRootNodeId, "dir"); dir != 0) {
    looked_up(dir, "inner");
  }
  std::set<uint64_t> known;
  for (const SavedNode& node : table.Save().nodes) known.insert(node.nodeid);
  for (size_t i = 0; i < served; ++i) {
    if (const uint64_t lookups = table.LookupCount(restored[i]); lookups > 0) {
      table.Forget(restored[i], lookups);
    }
  }
  return known;
}

// The journal knows every node of the table with its lookups, and none that the table dropped.
void CheckJournalKnowsTheTable(int memfd, InodeTable& table, const std::set<uint64_t>& known) {
  const daemon::SavedTable saved = table.Save();
  const NodeJournal::Recovery after = Adopt(CopyOf(memfd))->Recover();
  if (!after.complete) std::abort();  // every scratch inode has a handle
  const std::map<uint64_t, const SavedNode*> journal = ById(after.nodes);
  std::set<uint64_t> present;
  for (const SavedNode& node : saved.nodes) {
    present.insert(node.nodeid);
    if (node.nodeid == InodeTable::kRootNodeId || node.handle.empty()) continue;
    auto found = journal.find(node.nodeid);
    if (found == journal.end() || found->second->lookups != node.lookups) std::abort();
  }
  for (const uint64_t id : known) {
    if (!present.contains(id) && journal.contains(id)) std::abort();
  }
}

void FuzzNodeJournal(const uint8_t* data, size_t size) {
  static Scratch scratch;
  if (size == 0) return;
  std::vector<std::byte> image(reinterpret_cast<const std::byte*>(data) + 1,
                               reinterpret_cast<const std::byte*>(data) + size);
  UntagSlots<NodeJournal::Slot, daemon::SlotJournalHeader>(image, scratch.inodes);
  BoundUsed<NodeJournal::Slot, daemon::SlotJournalHeader>(image, data[0]);
  daemon::SlotJournalHeader header{};
  std::memcpy(&header, image.data(), std::min(image.size(), sizeof(header)));  // not empty
  const ImageFlaw flaw = FlawOf(data[0]);
  absl::StatusOr<std::unique_ptr<NodeJournal>> journal =
      NodeJournal::Adopt(MakeKeptImage(kJournalBytes, image, flaw));
  if (flaw != ImageFlaw::kNone) {
    if (journal.ok() || (flaw != ImageFlaw::kWriteSealed && !absl::IsDataLoss(journal.status()))) {
      std::abort();
    }
    return;
  }
  if (!journal.ok()) std::abort();
  const NodeJournal::Recovery recovery = (*journal)->Recover();
  CheckRecovery(recovery, header.unrecorded);
  CheckJournalHoldsTheRecovery((*journal)->fd(), recovery);
  InodeTable table(scratch.OpenSource());
  if (!table.RestoreRecorded(recovery.nodes).ok()) std::abort();
  CheckRestored(table.Save(), recovery);
  std::vector<uint64_t> restored;
  for (const SavedNode& node : table.Save().nodes) {
    if (node.nodeid != InodeTable::kRootNodeId) restored.push_back(node.nodeid);
  }
  std::sort(restored.begin(), restored.end());
  table.RecordNodesIn(journal->get());
  const std::set<uint64_t> known = Serve(table, restored);
  CheckJournalKnowsTheTable((*journal)->fd(), table, known);
}

}  // namespace
}  // namespace ringfuse::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ringfuse::fuzz::FuzzNodeJournal(data, size);
  return 0;
}
