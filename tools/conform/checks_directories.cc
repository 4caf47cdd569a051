// Directory listings: the readdir cache that FOPEN_CACHE_DIR turns on, and which of READDIR and
// READDIRPLUS the kernel sends in each readdirplus mode the server can ask for at INIT.
#include <dirent.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tools/conform/check.h"
#include "tools/conform/context.h"
#include "tools/conform/fixture.h"

namespace ringfuse::conform {
namespace {

// Enough entries that a listing takes several requests of entries, not one and the empty one
// that ends it: the kernel fills up to the reader's buffer (32 KiB from glibc's readdir), and a
// READDIRPLUS entry takes about 170 bytes.
constexpr int kEntries = 1000;

// A directory "big" of kEntries empty files.
void AddBigDirectory(MemFs& fs) {
  const uint64_t big = fs.AddDir(wire::kRootId, "big");
  for (int i = 0; i < kEntries; ++i) fs.AddFile(big, absl::StrFormat("entry-%03d", i), "");
}

// Lists `path` with readdir(3) and nothing else (no stat of the entries); returns how many
// entries it saw, "." and ".." included.
int List(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return -1;
  int entries = 0;
  while (::readdir(dir) != nullptr) ++entries;
  ::closedir(dir);
  return entries;
}

// The READDIRs of a second listing of "big", on a mount that answers OPENDIR with `flags`.
size_t ReaddirsOfSecondListing(CheckContext& context, uint32_t flags) {
  MemFs::Options options = Cached();
  options.opendir_flags = flags;
  MemFs fs(options);
  AddBigDirectory(fs);
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return 0;
  context.Expect(List(mount->Path("big")) == kEntries + 2, "the first listing sees every entry");
  mount->log().Settle();
  const size_t mark = mount->log().Mark();
  context.Expect(List(mount->Path("big")) == kEntries + 2, "the second listing sees every entry");
  mount->log().Settle();
  return mount->log().CountSince(mark, Opcode::kReaddir);
}

void FopenCacheDir(CheckContext& context) {
  const size_t kept =
      ReaddirsOfSecondListing(context, wire::kFopenCacheDir | wire::kFopenKeepCache);
  const size_t dropped = ReaddirsOfSecondListing(context, wire::kFopenCacheDir);
  const size_t uncached = ReaddirsOfSecondListing(context, 0);
  context.Evidence(absl::StrFormat(
      "READDIRs of a second listing: %d with CACHE_DIR|KEEP_CACHE, %d with CACHE_DIR alone, "
      "%d with neither",
      kept, dropped, uncached));
  context.Expect(kept == 0, "with CACHE_DIR and KEEP_CACHE the kernel lists from its cache");
  context.Expect(dropped > 0, "CACHE_DIR without KEEP_CACHE drops the cache at OPENDIR");
  context.Expect(uncached > 0, "without CACHE_DIR every listing reads the directory (control)");
}

// The opcodes of one listing of "big" on a mount that wishes `wish` at INIT.
std::vector<std::string> ListingOpcodes(CheckContext& context, uint64_t wish) {
  MemFs fs(Cached());
  AddBigDirectory(fs);
  SessionOptions options;
  options.init.flags |= wish;
  const std::unique_ptr<Mounted> mount = context.Mount(fs, options);
  if (!mount) return {};
  InodeOf(mount->Path("big"));
  const size_t mark = mount->log().Mark();
  context.Expect(List(mount->Path("big")) == kEntries + 2, "the listing sees every entry");
  mount->log().Settle();
  std::vector<std::string> listing;
  for (const std::string& opcode : mount->log().OpcodesSince(mark)) {
    if (opcode == "READDIR" || opcode == "READDIRPLUS") listing.push_back(opcode);
  }
  context.Evidence(absl::StrCat("wished ", wish == 0 ? "neither" : InitFlagNames(wish), ": ",
                                absl::StrJoin(listing, " ")));
  return listing;
}

bool All(const std::vector<std::string>& opcodes, std::string_view opcode) {
  return !opcodes.empty() &&
         std::all_of(opcodes.begin(), opcodes.end(), [&](const auto& o) { return o == opcode; });
}

void ReaddirplusOff(CheckContext& context) {
  const std::vector<std::string> listing = ListingOpcodes(context, 0);
  context.Expect(All(listing, "READDIR"), "without DO_READDIRPLUS every request is READDIR");
}

void ReaddirplusAlways(CheckContext& context) {
  const std::vector<std::string> listing = ListingOpcodes(context, wire::init_flag::kDoReaddirplus);
  context.Expect(listing.size() > 1, "the listing takes several requests");
  context.Expect(All(listing, "READDIRPLUS"),
                 "with DO_READDIRPLUS alone every request is READDIRPLUS");
}

// The kernel's heuristic (fuse_use_readdirplus): READDIRPLUS at offset 0, or after a LOOKUP in
// the directory advised it; a listing that stats nothing continues with READDIR.
void ReaddirplusAuto(CheckContext& context) {
  const std::vector<std::string> listing =
      ListingOpcodes(context, wire::init_flag::kDoReaddirplus | wire::init_flag::kReaddirplusAuto);
  context.Expect(!listing.empty() && listing.front() == "READDIRPLUS",
                 "with READDIRPLUS_AUTO the listing starts with READDIRPLUS");
  context.Expect(listing.size() > 1 && All({listing.begin() + 1, listing.end()}, "READDIR"),
                 "and continues with READDIR when nothing was looked up meanwhile");
}

}  // namespace

std::vector<Check> DirectoryChecks() {
  return {
      {.name = "directory.fopen_cache_dir",
       .summary = "FOPEN_CACHE_DIR with KEEP_CACHE lets the kernel list a directory from its cache",
       .needs_minor = 28,
       .run = FopenCacheDir},
      {.name = "directory.readdirplus_always",
       .summary = "with DO_READDIRPLUS alone every listing request is READDIRPLUS",
       .needs_flags = wire::init_flag::kDoReaddirplus,
       .run = ReaddirplusAlways},
      {.name = "directory.readdirplus_auto",
       .summary = "with READDIRPLUS_AUTO a listing starts with READDIRPLUS, then READDIR",
       .needs_flags = wire::init_flag::kDoReaddirplus | wire::init_flag::kReaddirplusAuto,
       .run = ReaddirplusAuto},
      {.name = "directory.readdirplus_off",
       .summary = "without DO_READDIRPLUS a listing is READDIR only",
       .run = ReaddirplusOff},
  };
}

}  // namespace ringfuse::conform
