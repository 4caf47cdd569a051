// libFuzzer target over the open-file journal a kept ringfused finds after a crash
// (daemon/crash/open_file_journal.h): the memfd the keeper hands it, made from the input, adopted
// and reopened from as RecoverAfterCrash (daemon/main.cc) does, into a PassthroughFs that knows the
// scratch tree's nodes; then the kernel goes on with the files: it reads and releases each, and
// opens one more.
//
// Input: one byte (what may be wrong with the memfd as a whole, kept_image.h), then the memfd's
// bytes from offset 0: the header (used, unrecorded) and slots (fh, flags, node id, handle); the
// rest of the memfd is zeros. A slot may name an inode of the scratch tree by a tag instead of a
// handle (scratch_inodes.h); a `used` past the input's slots is brought down to them unless the
// first byte says otherwise (BoundUsed, kept_image.h). The dead daemon's nodes are looked up before
// the recovery, in this order, so that records can name them: file 2, dir 3, dir/inner 4, fifo 5,
// outfile 6 (the root is 1); this daemon is incarnation 1 (its own node ids and fh values start at
// 2^40).
//
// Whatever the bytes: a memfd no ringfused made is refused with DataLoss, any other recovered
// without a crash or a hang; a file is reopened only where its record's handle reaches the
// inode of its record's node, so nothing outside source is opened and nothing in source changes
// (no O_CREAT, no O_TRUNC is done again); the filesystem holds exactly the files it says it
// reopened, and the journal exactly those (the rest released); every request on them is
// answered once, with a reply the kernel takes; a file opened after the recovery is a new handle
// beside them, under an fh none of them has; and once they are released the journal holds the
// new one alone.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "daemon/crash/incarnation.h"
#include "daemon/crash/open_file_journal.h"
#include "daemon/crash/reopen_after_crash.h"
#include "daemon/fs/passthrough_fs.h"
#include "tests/fuzz/fuzz_checks.h"
#include "tests/fuzz/fuzz_sandbox.h"
#include "tests/fuzz/kept_image.h"
#include "tests/fuzz/scratch_inodes.h"

namespace ringfuse::fuzz {
namespace {

using daemon::OpenFileJournal;

constexpr size_t kJournalBytes =
    sizeof(OpenFileJournal::Header) + OpenFileJournal::kSlots * sizeof(OpenFileJournal::Slot);
constexpr uint32_t kIncarnation = 1;
constexpr uint64_t kFirstOwnFh = (uint64_t{kIncarnation} << 40) + 1;
// The dead daemon's nodes, looked up in this order: node ids 2, 3, ... (dir/inner under dir).
constexpr const char* kDeadDaemonsNodes[] = {"file", "dir", "inner", "fifo", "outfile"};
constexpr uint64_t kFileNode = 2;
// Far more than reopening a journal's files takes.
constexpr absl::Duration kLongestRecovery = absl::Seconds(2);

// The scratch tree, made once: nothing here may change it.
struct Scratch {
  Scratch() {
    sandbox.Rebuild();
    daemon::InodeTable table(OpenSource());
    inodes = ScratchInodes(sandbox, table.handles());
    source_snapshot = Snapshot(sandbox.source());
  }
  base::UniqueFd OpenSource() const {
    return base::UniqueFd(::open(sandbox.source().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }
  Sandbox sandbox;
  std::vector<ScratchInode> inodes;
  std::string source_snapshot;
};

// The records the journal in `memfd` holds now, read without recovering it: a recovery would
// rewrite the memfd under the live journal, which no second daemon does while one lives.
std::vector<OpenFileJournal::Entry> RecordsIn(int memfd) {
  constexpr uint32_t kValid = 0x52464f46;  // "RFOF", OpenFileJournal::Slots
  OpenFileJournal::Header header{};
  if (::pread(memfd, &header, sizeof(header), 0) != sizeof(header)) std::abort();
  std::vector<OpenFileJournal::Slot> slots(
      std::min<uint64_t>(header.used, OpenFileJournal::kSlots));
  const ssize_t bytes = static_cast<ssize_t>(slots.size() * sizeof(OpenFileJournal::Slot));
  if (::pread(memfd, slots.data(), bytes, sizeof(header)) != bytes) std::abort();
  std::vector<OpenFileJournal::Entry> entries;
  for (const OpenFileJournal::Slot& slot : slots) {
    if (slot.state != kValid) continue;
    if (slot.handle_size > OpenFileJournal::kMaxHandle) std::abort();  // recovered, so refused
    entries.push_back(
        {slot.key, slot.nodeid, slot.flags, std::string(slot.handle, slot.handle_size)});
  }
  return entries;
}

void LookUpTheDeadDaemonsNodes(daemon::InodeTable& table) {
  uint64_t parent = daemon::InodeTable::kRootNodeId, expected = kFileNode;
  for (const char* name : kDeadDaemonsNodes) {
    daemon::Found found;
    if (!table.Lookup(parent, name, found).ok() || found.inode->nodeid != expected++) std::abort();
    if (std::string_view(name) == "dir") parent = found.inode->nodeid;
    if (std::string_view(name) == "inner") parent = daemon::InodeTable::kRootNodeId;
  }
}

// Each file reopened is its node's inode: its handle reaches the inode the table has for it.
void CheckReopenedTheirOwnInodes(daemon::PassthroughFs& fs,
                                 const std::vector<OpenFileJournal::Entry>& reopened) {
  for (const OpenFileJournal::Entry& entry : reopened) {
    const base::ErrnoOr<std::shared_ptr<const daemon::Inode>> node = fs.inodes().Get(entry.nodeid);
    const base::ErrnoOr<base::UniqueFd> inode = fs.inodes().handles().Open(entry.handle);
    struct stat st {};
    if (!node.ok() || !inode.ok() || ::fstat(inode->get(), &st) != 0 || st.st_dev != (*node)->dev ||
        st.st_ino != (*node)->ino) {
      std::abort();
    }
  }
}

// The kernel goes on with the reopened files: it opens the scratch file once more (a handle
// beside theirs), and reads and releases each of them.
void GoOn(daemon::PassthroughFs& fs, const std::vector<OpenFileJournal::Entry>& reopened,
          int memfd) {
  CountingChannel channel;
  NullDiagnostics diagnostics;
  internal::Dispatcher dispatcher(fs, channel, diagnostics, InitWishes{});
  SendInit(dispatcher, KernelOffer());
  uint64_t unique = 10;
  // Answered once; returns its error.
  const auto answered = [&](Opcode opcode, uint64_t nodeid, std::string_view body) {
    dispatcher.Dispatch(MakeRequest(opcode, ++unique, nodeid, body), internal::Delivery{});
    if (channel.RepliesTo(unique) != 1) std::abort();
    return channel.ErrorOf(unique);
  };
  const size_t held = fs.counts().open_handles;
  if (answered(Opcode::kOpen, kFileNode, BytesOf(OpenArgs(O_RDONLY))) == 0 &&
      fs.counts().open_handles != held + 1) {
    std::abort();  // the new handle took the place of one reopened
  }
  for (const OpenFileJournal::Entry& entry : reopened) {
    const bool dir = (entry.flags & O_DIRECTORY) != 0;
    answered(dir ? Opcode::kReaddir : Opcode::kRead, entry.nodeid,
             BytesOf(ReadArgs(entry.fh, 4096)));
    if (answered(dir ? Opcode::kReleasedir : Opcode::kRelease, entry.nodeid,
                 BytesOf(ReleaseArgs(entry.fh))) != 0) {
      std::abort();
    }
  }
  const std::vector<OpenFileJournal::Entry> left = RecordsIn(memfd);
  if (left.size() != fs.counts().open_handles) std::abort();
  for (const OpenFileJournal::Entry& entry : left) {
    if (entry.fh < kFirstOwnFh) std::abort();  // one reopened and released stayed
  }
}

void FuzzOpenFileJournal(const uint8_t* data, size_t size) {
  static Scratch scratch;
  if (size == 0) return;
  std::vector<std::byte> image(reinterpret_cast<const std::byte*>(data) + 1,
                               reinterpret_cast<const std::byte*>(data) + size);
  UntagSlots<OpenFileJournal::Slot, OpenFileJournal::Header>(image, scratch.inodes);
  BoundUsed<OpenFileJournal::Slot, OpenFileJournal::Header>(image, data[0]);
  const ImageFlaw flaw = FlawOf(data[0]);
  absl::StatusOr<std::unique_ptr<OpenFileJournal>> journal =
      OpenFileJournal::Adopt(MakeKeptImage(kJournalBytes, image, flaw));
  if (flaw != ImageFlaw::kNone) {
    if (journal.ok() || (flaw != ImageFlaw::kWriteSealed && !absl::IsDataLoss(journal.status()))) {
      std::abort();
    }
    return;
  }
  if (!journal.ok()) std::abort();
  daemon::last_fh_given.store(0);  // no handle outlives an input
  daemon::DaemonOptions options;
  options.source = scratch.sandbox.source();
  daemon::PassthroughFs fs(scratch.OpenSource(), options);
  LookUpTheDeadDaemonsNodes(fs.inodes());
  if (!daemon::ContinueAfterCrash(fs, kIncarnation).ok()) std::abort();
  fs.parts().open.KeepIn(journal->get());
  const absl::Time start = absl::Now();
  const size_t reopened_count =
      daemon::ReopenAfterCrash(**journal, fs.parts().inodes, fs.parts().open);
  // A reopen that blocks (a FIFO with no writer) would hold the daemon's recovery up for good;
  // here libFuzzer's alarm interrupts it, which must not hide it.
  if (absl::Now() - start > kLongestRecovery) std::abort();
  const std::vector<OpenFileJournal::Entry> reopened = RecordsIn((*journal)->fd());
  if (reopened.size() != reopened_count || fs.counts().open_handles != reopened_count) std::abort();
  CheckReopenedTheirOwnInodes(fs, reopened);
  if (Snapshot(scratch.sandbox.source()) != scratch.source_snapshot) std::abort();
  scratch.sandbox.CheckConfined();
  GoOn(fs, reopened, (*journal)->fd());
}

}  // namespace
}  // namespace ringfuse::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ringfuse::fuzz::FuzzOpenFileJournal(data, size);
  return 0;
}
