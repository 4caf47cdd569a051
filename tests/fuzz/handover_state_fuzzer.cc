// libFuzzer target over the state a ringfused restores from the daemon it takes over from
// (daemon/handover/handover_state.h): the application's part of a handover record, its bytes and
// the fds beside them, restored into a PassthroughFs as ringfused's takeover does
// (RestoreHandoverState), handed over again, and served from.
//
// Input: one byte, n = its value modulo 9, then n bytes choosing the fds handed over, in order
// (kFdKinds: fds of source, of its files and directories, of the canary beside it, /dev/null),
// then the record's bytes. The record names inodes by (dev, ino) and by handle, which no seed can
// hold, so before it is read these stand-ins are replaced: the 8 bytes "@@dev@@@" by the scratch
// tree's st_dev, "@@ino@@" and a byte i by the st_ino of scratch inode i (scratch_inodes.h), and
// the string "@@hnd@@" and a byte i (a u64 length of 8 and those 8 bytes) by that inode's handle.
//
// Whatever the bytes: nothing crashes, reads out of bounds or hangs; a record refused says why;
// one restored is one the daemon can hand over again, its successor restoring it and the same
// revision; every request on its nodes and handles is answered once, with a reply the kernel
// takes; nothing outside source changes; and every fd handed over is closed once the
// filesystem that took it goes, whether it took the record or refused it.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/fs/passthrough_fs.h"
#include "daemon/handover/fs_handover.h"
#include "daemon/handover/handover_state.h"
#include "tests/fuzz/fuzz_checks.h"
#include "tests/fuzz/fuzz_fds.h"
#include "tests/fuzz/fuzz_sandbox.h"
#include "tests/fuzz/scratch_inodes.h"

namespace ringfuse::fuzz {
namespace {

using daemon::PassthroughFs;

constexpr size_t kMostFds = 8;
// How many nodes, files and directories of a restored state are asked about.
constexpr size_t kMostServed = 16;

// What the old daemon may hand over, as fds: a path under the sandbox ("" for the handed file,
// fuzz_fds.h, which is none of the tree's) and the flags it is opened with.
struct FdKind {
  const char* path;
  int flags;
};
constexpr FdKind kFdKinds[] = {
    {"source", O_PATH | O_DIRECTORY},        // the root, as the table holds it
    {"source", O_RDONLY | O_DIRECTORY},      // a mount's directory, for handles
    {"source/file", O_RDWR},                 // an open file
    {"source/file", O_PATH},                 // a node only FORGET closes
    {"source/dir", O_RDONLY | O_DIRECTORY},  // an open directory
    {"source/dir/inner", O_RDONLY},
    {"source/fifo", O_PATH},
    {"canary/secret", O_RDONLY},  // no daemon of source holds it
    {"", O_RDWR},
};

// The scratch tree, made once: nothing here may change it.
struct Scratch {
  Scratch() {
    sandbox.Rebuild();
    PassthroughFs fs(OpenSource(), Options());
    inodes = ScratchInodes(sandbox, fs.inodes().handles());
  }
  base::UniqueFd OpenSource() const {
    return base::UniqueFd(::open(sandbox.source().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }
  daemon::DaemonOptions Options() const {
    daemon::DaemonOptions options;
    options.source = sandbox.source();
    return options;
  }
  int Open(const FdKind& kind) const {
    const int fd = *kind.path == '\0'
                       ? ::fcntl(HandedFile(), F_DUPFD_CLOEXEC, 0)
                       : ::open((base() / kind.path).c_str(), kind.flags | O_CLOEXEC);
    if (fd < 0) std::abort();
    return fd;
  }
  std::filesystem::path base() const { return sandbox.source().parent_path(); }
  Sandbox sandbox;
  std::vector<ScratchInode> inodes;
};

// Replaces each `tag`, and the byte i after it, with `with(i)`.
template <typename With>
void ReplaceTagged(std::string& text, std::string_view tag, With with) {
  size_t at = 0;
  while ((at = text.find(tag, at)) != std::string::npos && at + tag.size() < text.size()) {
    const std::string by = with(static_cast<uint8_t>(text[at + tag.size()]));
    text.replace(at, tag.size() + 1, by);
    at += by.size();
  }
}

template <typename T>
std::string Field(T value) {
  return std::string(BytesOf(value));
}

// The record with the stand-ins for the scratch tree's dev, inode numbers and handles replaced.
std::string WithScratchInodes(std::string record, const std::vector<ScratchInode>& inodes) {
  const auto inode = [&](uint8_t i) -> const ScratchInode& { return inodes[i % inodes.size()]; };
  ReplaceTagged(record, "@@dev@@", [&](uint8_t) { return Field<uint64_t>(inodes[0].dev); });
  ReplaceTagged(record, "@@ino@@", [&](uint8_t i) { return Field<uint64_t>(inode(i).ino); });
  ReplaceTagged(record, Field<uint64_t>(8) + "@@hnd@@", [&](uint8_t i) {
    return Field<uint64_t>(inode(i).handle.size()) + inode(i).handle;
  });
  return record;
}

// The state handed over again from `fs`, as ringfused's save does, restores into a successor.
void CheckHandsOverAgain(PassthroughFs& fs, const std::string& revision, const Scratch& scratch) {
  absl::StatusOr<HandoverPayload> saved = daemon::SaveHandoverState(fs, revision);
  if (!saved.ok()) std::abort();
  for (int& fd : saved->fds) fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);  // they stay fs's
  PassthroughFs successor(scratch.OpenSource(), scratch.Options());
  absl::StatusOr<std::string> restored = daemon::RestoreHandoverState(std::move(*saved), successor);
  if (!restored.ok() || *restored != revision) std::abort();
}

// The kernel goes on: it asks about nodes, reads and lists what is open, and releases it.
void Serve(PassthroughFs& fs) {
  const daemon::SavedFs saved = daemon::SaveFs(fs);
  CountingChannel channel;
  NullDiagnostics diagnostics;
  internal::Dispatcher dispatcher(fs, channel, diagnostics, InitWishes{});
  SendInit(dispatcher, KernelOffer());
  uint64_t unique = 10;
  const auto answered = [&](std::vector<std::byte> message) {
    dispatcher.Dispatch(message, internal::Delivery{});
    if (channel.RepliesTo(unique++) != 1) std::abort();
  };
  for (size_t i = 0; i < std::min(saved.table.nodes.size(), kMostServed); ++i) {
    answered(MakeRequest(Opcode::kGetattr, unique, saved.table.nodes[i].nodeid,
                         BytesOf(wire::GetattrIn{})));
  }
  for (std::string_view name : {"file", "dir", "fifo"}) {
    answered(MakeRequest(Opcode::kLookup, unique, 1, std::string(name) + '\0'));
  }
  for (size_t i = 0; i < std::min(saved.files.size(), kMostServed); ++i) {
    const uint64_t fh = saved.files[i].fh;
    answered(MakeRequest(Opcode::kRead, unique, 1, BytesOf(ReadArgs(fh, 64))));
    answered(MakeRequest(Opcode::kRelease, unique, 1, BytesOf(ReleaseArgs(fh))));
  }
  for (size_t i = 0; i < std::min(saved.dirs.size(), kMostServed); ++i) {
    const uint64_t fh = saved.dirs[i].fh;
    answered(MakeRequest(Opcode::kReaddir, unique, 1, BytesOf(ReadArgs(fh, 4096))));
    answered(MakeRequest(Opcode::kReleasedir, unique, 1, BytesOf(ReleaseArgs(fh))));
  }
}

void FuzzHandoverState(ConstBytes input) {
  static Scratch scratch;
  if (input.empty()) return;
  const size_t fd_count =
      std::min<size_t>(std::to_integer<size_t>(input[0]) % (kMostFds + 1), input.size() - 1);
  HandoverPayload payload;
  for (size_t i = 0; i < fd_count; ++i) {
    const size_t kind = std::to_integer<size_t>(input[1 + i]) % std::size(kFdKinds);
    payload.fds.push_back(scratch.Open(kFdKinds[kind]));
  }
  const ConstBytes record = input.subspan(1 + fd_count);
  payload.bytes = WithScratchInodes(
      std::string(reinterpret_cast<const char*>(record.data()), record.size()), scratch.inodes);
  daemon::last_fh_given.store(0);  // no handle outlives an input
  {
    PassthroughFs fs(scratch.OpenSource(), scratch.Options());
    absl::StatusOr<std::string> revision = daemon::RestoreHandoverState(std::move(payload), fs);
    if (!revision.ok()) {
      if (revision.status().message().empty()) std::abort();
    } else {
      CheckHandsOverAgain(fs, *revision, scratch);
      Serve(fs);
    }
  }
  scratch.sandbox.CheckConfined();
  if (OpenFdsTo(scratch.base().native()) != 0 || !HandedFdsClosed()) std::abort();
}

}  // namespace
}  // namespace ringfuse::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A private, exactly-sized copy so that any overread is caught by ASan.
  std::vector<std::byte> copy(size);
  if (size > 0) std::memcpy(copy.data(), data, size);
  ringfuse::fuzz::FuzzHandoverState(copy);
  return 0;
}
