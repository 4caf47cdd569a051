// Requests and what the server's answers and INIT wishes make of them: INTERRUPT, the request
// timeout, max_write and max_pages, the FOPEN flags, the writeback cache, negative entries and
// cached symlinks. Each compares the flag's effect with a control mount without it.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/fd.h"
#include "ringfuse/protocol/frames.h"
#include "tools/conform/check.h"
#include "tools/conform/context.h"
#include "tools/conform/fixture.h"

namespace ringfuse::conform {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The READs or WRITEs a mount saw since `mark`, by size.
std::vector<uint64_t> SizesSince(Mounted& mount, size_t mark, Opcode opcode) {
  std::vector<uint64_t> sizes;
  for (const RequestLog::Entry& entry : mount.log().Since(mark)) {
    if (entry.opcode == static_cast<uint32_t>(opcode)) sizes.push_back(entry.size);
  }
  return sizes;
}

// MemFs whose READs wait for the kernel's INTERRUPT (at most 10 s) and then answer EINTR, as a
// server that honours interrupts does.
class InterruptibleFs : public MemFs {
 public:
  using MemFs::MemFs;
  void Read(const RequestContext& context, const op::Read& args, DataReply reply) override {
    const auto deadline = std::chrono::steady_clock::now() + seconds(10);
    while (!context.Interrupted() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    if (context.Interrupted()) return reply.Error(EINTR);
    MemFs::Read(context, args, std::move(reply));
  }
};

void Interrupt(CheckContext& context) {
  InterruptibleFs fs(Cached(wire::kFopenDirectIo));
  fs.AddFile(wire::kRootId, "f", "x");
  // The READ's worker waits for the INTERRUPT, which another must read (one per CPU by default).
  SessionOptions options;
  options.transport_options.workers = 2;
  const std::unique_ptr<Mounted> mount = context.Mount(fs, options);
  if (!mount) return;
  struct sigaction wake {
  }, old{};
  wake.sa_handler = [](int) {};  // no SA_RESTART: the read returns EINTR
  ::sigaction(SIGUSR1, &wake, &old);
  const size_t mark = mount->log().Mark();
  std::atomic<int> read_errno{-1};
  std::thread client([&] {
    const base::UniqueFd file(::open(mount->Path("f").c_str(), O_RDONLY | O_CLOEXEC));
    char byte;
    read_errno = ::read(file.get(), &byte, 1) < 0 ? errno : 0;
  });
  const bool read_sent = mount->log().WaitFor(mark, Opcode::kRead);
  context.Expect(read_sent, "the client's read sends READ");
  if (read_sent) ::pthread_kill(client.native_handle(), SIGUSR1);
  const bool interrupted = mount->log().WaitFor(mark, Opcode::kInterrupt);
  client.join();
  ::sigaction(SIGUSR1, &old, nullptr);
  uint64_t read_unique = 0, target = 0;
  for (const RequestLog::Entry& entry : mount->log().Since(mark)) {
    context.Evidence(entry.line);
    if (entry.opcode == static_cast<uint32_t>(Opcode::kRead)) read_unique = entry.unique;
    if (entry.opcode == static_cast<uint32_t>(Opcode::kInterrupt)) target = entry.target;
  }
  context.Expect(interrupted, "a signal to the blocked client sends INTERRUPT");
  context.Expect(interrupted && target == read_unique, "INTERRUPT names the READ in flight");
  context.Evidence(absl::StrFormat("the client's read: %s",
                                   read_errno == 0 ? "ok" : strerrorname_np(read_errno)));
  context.Expect(read_errno == EINTR, "the interrupted read returns EINTR, as the server said");
}

void RequestTimeout(CheckContext& context) {
  MemFs fs(Cached(wire::kFopenDirectIo));
  fs.AddFile(wire::kRootId, "f", "x");
  SessionOptions options;
  options.init.flags |= wire::init_flag::kRequestTimeout;
  options.init.request_timeout = 1;
  const std::unique_ptr<Mounted> mount = context.Mount(fs, options);
  if (!mount) return;
  Gate gate(fs, Opcode::kRead, seconds(60));
  context.Evidence(
      absl::StrFormat("negotiated request_timeout: %d s", mount->negotiated().request_timeout));
  const auto start = std::chrono::steady_clock::now();
  const std::string got = ReadAt(mount->Path("f"), 1);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  gate.Release();
  context.Evidence(absl::StrFormat("the unanswered read ended after %.1f s: %s", took,
                                   got.starts_with("ERR") ? got : "it was answered"));
  context.Expect(got == "ERR ECONNABORTED" || got == "ERR ENOTCONN",
                 "the connection aborts and the read fails");
  struct stat st {};
  context.Expect(::stat(mount->root().c_str(), &st) != 0 && errno == ENOTCONN,
                 "the mount answers ENOTCONN afterwards");
}

// Writes 256 KiB in one call through DIRECT_IO with max_write 16 KiB: every WRITE is at most
// max_write, and they carry all of it.
void MaxWrite(CheckContext& context) {
  constexpr uint32_t kMaxWrite = 16384;
  constexpr size_t kBytes = 256 * 1024;
  MemFs fs(Cached(wire::kFopenDirectIo));
  fs.AddFile(wire::kRootId, "f", "");
  SessionOptions options;
  options.init.max_write = kMaxWrite;
  const std::unique_ptr<Mounted> mount = context.Mount(fs, options);
  if (!mount) return;
  context.Evidence(absl::StrFormat("negotiated max_write %d, max_pages %d",
                                   mount->negotiated().max_write, mount->negotiated().max_pages));
  const std::string bytes = KnownBytes(kBytes, 'w');
  const size_t mark = mount->log().Mark();
  const base::UniqueFd file(::open(mount->Path("f").c_str(), O_WRONLY | O_CLOEXEC));
  context.Expect(::write(file.get(), bytes.data(), bytes.size()) == kBytes, "the write succeeds");
  const std::vector<uint64_t> sizes = SizesSince(*mount, mark, Opcode::kWrite);
  context.Evidence(absl::StrCat("WRITE sizes: ", absl::StrJoin(sizes, " ")));
  uint64_t total = 0, largest = 0;
  for (uint64_t size : sizes) total += size, largest = std::max(largest, size);
  context.Expect(largest == kMaxWrite, "the largest WRITE is exactly max_write");
  context.Expect(total == kBytes, "the WRITEs carry every byte");
}

// Reads 1 MiB in one call through DIRECT_IO with max_pages 8 (ringfuse asks for max_write's worth
// of pages) and max_read left large: every READ is exactly max_pages pages but the last.
void MaxPages(CheckContext& context) {
  constexpr size_t kBytes = 1 << 20;
  MemFs fs(Cached(wire::kFopenDirectIo));
  fs.AddFile(wire::kRootId, "f", KnownBytes(kBytes, 'p'));
  SessionOptions options;
  options.init.max_write = 32 * 1024;
  const std::unique_ptr<Mounted> mount = context.Mount(fs, options);
  if (!mount) return;
  const uint64_t max_bytes = uint64_t{mount->negotiated().max_pages} * 4096;
  const size_t mark = mount->log().Mark();
  context.Expect(ReadAt(mount->Path("f"), kBytes).size() == kBytes, "the read gets every byte");
  const std::vector<uint64_t> sizes = SizesSince(*mount, mark, Opcode::kRead);
  context.Evidence(absl::StrFormat("max_pages %d; READ sizes: %s", mount->negotiated().max_pages,
                                   absl::StrJoin(sizes, " ")));
  uint64_t largest = 0;
  for (uint64_t size : sizes) largest = std::max(largest, size);
  context.Expect(mount->negotiated().max_pages == 8, "max_pages 8 is agreed");
  context.Expect(largest == max_bytes, "the largest READ is exactly max_pages pages");
}

// How many `opcode` requests `act` produced on a fresh mount of "f" (8 KiB), served with
// `open_flags` and `wish`.
size_t CountWith(CheckContext& context, uint32_t open_flags, uint64_t wish, Opcode opcode,
                 const std::function<void(Mounted&)>& act) {
  MemFs fs(Cached(open_flags));
  fs.AddFile(wire::kRootId, "f", KnownBytes(8192, 'f'));
  SessionOptions options;
  options.init.flags |= wish;
  const std::unique_ptr<Mounted> mount = context.Mount(fs, options);
  if (!mount) return 0;
  InodeOf(mount->Path("f"));
  const size_t mark = mount->log().Mark();
  act(*mount);
  mount->log().Settle(milliseconds(50));
  return mount->log().CountSince(mark, opcode);
}

// Compares `opcode` requests of `act` with and without a flag: `with` and `without` expected.
void CompareFlag(CheckContext& context, std::string_view flag, uint32_t open_flags, uint64_t wish,
                 Opcode opcode, const std::function<void(Mounted&)>& act, size_t with,
                 size_t without) {
  const size_t got_with = CountWith(context, open_flags, wish, opcode, act);
  const size_t got_without = CountWith(context, 0, 0, opcode, act);
  context.Evidence(absl::StrFormat("%s: with %s %d, without %d", OpcodeName(uint32_t(opcode)), flag,
                                   got_with, got_without));
  context.Expect(got_with == with,
                 absl::StrFormat("with %s, %d %s", flag, with, OpcodeName(uint32_t(opcode))));
  context.Expect(got_without == without, absl::StrFormat("without %s, %d %s (control)", flag,
                                                         without, OpcodeName(uint32_t(opcode))));
}

void ReadTwice(Mounted& mount) {
  ReadAt(mount.Path("f"), 4096);
  ReadAt(mount.Path("f"), 4096);
}

void FopenDirectIo(CheckContext& context) {
  CompareFlag(
      context, "FOPEN_DIRECT_IO", wire::kFopenDirectIo, 0, Opcode::kRead,
      [](Mounted& m) {
        // One file kept open, read twice: the page cache answers the second read unless
        // DIRECT_IO bypasses it.
        const base::UniqueFd file(::open(m.Path("f").c_str(), O_RDONLY | O_CLOEXEC));
        char buffer[4096];
        ::pread(file.get(), buffer, sizeof(buffer), 0);
        ::pread(file.get(), buffer, sizeof(buffer), 0);
      },
      2, 1);
}

void FopenKeepCache(CheckContext& context) {
  CompareFlag(context, "FOPEN_KEEP_CACHE", wire::kFopenKeepCache, 0, Opcode::kRead, ReadTwice, 1,
              2);
}

void FopenNoflush(CheckContext& context) {
  CompareFlag(
      context, "FOPEN_NOFLUSH", wire::kFopenNoFlush, 0, Opcode::kFlush,
      [](Mounted& m) { ReadAt(m.Path("f"), 1); }, 0, 1);
}

// MemFs that keeps its WRITEs' replies unanswered (the data unwritten) until Release, without
// blocking the thread that took them: on uring-cmd one thread serves each CPU's queue, so a
// handler that blocked would hold back the next request itself, and the check would measure
// the server instead of the kernel.
class HeldWritesFs : public MemFs {
 public:
  using MemFs::MemFs;
  ~HeldWritesFs() override { Release(); }
  void Write(const RequestContext& context, const op::Write& args, CountReply reply) override {
    std::unique_lock lock(mutex_);
    if (released_) {
      lock.unlock();
      return MemFs::Write(context, args, std::move(reply));
    }
    held_.emplace_back(std::move(reply), args.data.size());
  }
  void Release() {
    std::vector<std::pair<CountReply, size_t>> held;
    {
      std::lock_guard lock(mutex_);
      released_ = true;
      held.swap(held_);
    }
    for (auto& [reply, size] : held) reply.Ok(size);
  }

 private:
  std::mutex mutex_;
  bool released_ = false;
  std::vector<std::pair<CountReply, size_t>> held_;
};

// Two O_DIRECT writers within the file: with PARALLEL_DIRECT_WRITES the second WRITE reaches the
// server while the first is unanswered; without it the inode lock holds the second back.
size_t WritesInFlight(CheckContext& context, uint32_t open_flags) {
  HeldWritesFs fs(Cached(open_flags));
  fs.AddFile(wire::kRootId, "f", KnownBytes(8192, 'f'));
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return 0;
  const size_t mark = mount->log().Mark();
  auto write_at = [&](off_t offset) {
    const base::UniqueFd file(::open(mount->Path("f").c_str(), O_WRONLY | O_CLOEXEC));
    ::pwrite(file.get(), "x", 1, offset);
  };
  std::thread first(write_at, 0), second(write_at, 4096);
  // Both writers have opened the file and one WRITE is held; the second has a second to come.
  context.Expect(mount->log().WaitFor(mark, Opcode::kOpen, seconds(5), 2) &&
                     mount->log().WaitFor(mark, Opcode::kWrite),
                 "both writers open the file and one WRITE reaches the server");
  mount->log().WaitFor(mark, Opcode::kWrite, seconds(1), 2);
  const size_t in_flight = mount->log().CountSince(mark, Opcode::kWrite);
  fs.Release();
  first.join();
  second.join();
  return in_flight;
}

void FopenParallelDirectWrites(CheckContext& context) {
  const size_t parallel =
      WritesInFlight(context, wire::kFopenDirectIo | wire::kFopenParallelDirectWrites);
  const size_t serial = WritesInFlight(context, wire::kFopenDirectIo);
  context.Evidence(
      absl::StrFormat("WRITEs in flight at once: %d with the flag, %d without", parallel, serial));
  context.Expect(parallel == 2, "with FOPEN_PARALLEL_DIRECT_WRITES both WRITEs are in flight");
  context.Expect(serial == 1, "without it the second waits for the first (control)");
}

void WritebackCache(CheckContext& context) {
  CompareFlag(
      context, "WRITEBACK_CACHE", 0, wire::init_flag::kWritebackCache, Opcode::kWrite,
      [](Mounted& m) {
        const base::UniqueFd file(::open(m.Path("f").c_str(), O_WRONLY | O_CLOEXEC));
        for (int i = 0; i < 4; ++i) ::pwrite(file.get(), "abcd", 4, i * 4);
        ::fsync(file.get());
      },
      1, 4);
}

size_t LookupsOfMissing(CheckContext& context, Timeout negative) {
  MemFs fs(MemFs::Options{.entry = kHour, .attr = kHour, .negative = negative});
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return 0;
  for (int i = 0; i < 3; ++i) InodeOf(mount->Path("missing"));
  return fs.LookupCount(wire::kRootId, "missing");
}

void NegativeEntry(CheckContext& context) {
  const size_t cached = LookupsOfMissing(context, kHour);
  const size_t uncached = LookupsOfMissing(context, Timeout{0, 0});
  context.Evidence(
      absl::StrFormat("LOOKUPs of a missing name stat'ed 3 times: %d with a "
                      "negative entry for an hour, %d with ENOENT",
                      cached, uncached));
  context.Expect(cached == 1, "a negative entry is cached for its timeout");
  context.Expect(uncached == 3, "ENOENT is not cached (control)");
}

// A negative entry cached for one second: the second stat is answered from the cache, and a
// stat after the second has passed asks again.
void NegativeEntryExpires(CheckContext& context) {
  MemFs fs(MemFs::Options{.entry = kHour, .attr = kHour, .negative = Timeout{1, 0}});
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return;
  InodeOf(mount->Path("missing"));
  InodeOf(mount->Path("missing"));
  const size_t within = fs.LookupCount(wire::kRootId, "missing");
  std::this_thread::sleep_for(milliseconds(1500));
  InodeOf(mount->Path("missing"));
  const size_t after = fs.LookupCount(wire::kRootId, "missing");
  context.Evidence(absl::StrFormat(
      "LOOKUPs of a missing name: %d after two stats within 1 s, %d after a third 1.5 s later",
      within, after));
  context.Expect(within == 1, "within its timeout the negative entry answers");
  context.Expect(after == 2, "after its timeout the kernel asks again");
}

// Whether /proc/self/mountinfo lists a mount whose source is `fsname`.
bool Listed(const std::string& fsname) {
  return ReadAt("/proc/self/mountinfo", 1 << 20).find(absl::StrCat(" ", fsname, " ")) !=
         std::string::npos;
}

// MemFs that notes, when INIT is agreed (before it is answered), whether its mount is listed.
class InitWitnessFs : public MemFs {
 public:
  explicit InitWitnessFs(std::string fsname) : MemFs(Cached()), fsname_(std::move(fsname)) {}
  void Init(const Negotiated& negotiated) override {
    listed_at_init = Listed(fsname_);
    MemFs::Init(negotiated);
  }
  std::atomic<bool> listed_at_init{false};

 private:
  const std::string fsname_;
};

// Whether the mount was in place when the server answered INIT, mounting with `sync_init`.
bool MountedAtInit(CheckContext& context, bool sync_init) {
  const std::string fsname = absl::StrFormat("conform-sync-init-%d-%d", ::getpid(), sync_init);
  InitWitnessFs fs(fsname);
  SessionOptions options;
  options.mount.fsname = fsname;
  options.mount.sync_init = sync_init;
  const std::unique_ptr<Mounted> mount = context.Mount(fs, options);
  if (!mount) return false;
  context.Expect(Listed(fsname), "the mount is listed once mounted");
  context.Evidence(absl::StrFormat("sync_init %s: the mount %s listed when INIT came",
                                   sync_init ? "on" : "off",
                                   fs.listed_at_init ? "was" : "was not yet"));
  return fs.listed_at_init;
}

// With FUSE_DEV_IOC_SYNC_INIT the kernel sends INIT from inside mount(), before the new mount is
// attached; without it INIT comes after mount() returned.
void SyncInit(CheckContext& context) {
  const base::UniqueFd probe(::open("/dev/fuse", O_RDWR | O_CLOEXEC));
  if (probe.valid() && ::ioctl(probe.get(), wire::kDevIocSyncInit) != 0 && errno == ENOTTY) {
    return context.NotOffered("the kernel has no FUSE_DEV_IOC_SYNC_INIT (it came in Linux 6.18)");
  }
  context.Expect(!MountedAtInit(context, true),
                 "with sync_init INIT comes before the mount is in place");
  context.Expect(MountedAtInit(context, false), "without it INIT comes after mount() (control)");
}

void CacheSymlinks(CheckContext& context) {
  CompareFlag(
      context, "CACHE_SYMLINKS", 0, wire::init_flag::kCacheSymlinks, Opcode::kReadlink,
      [](Mounted& m) {
        char target[64];
        ::symlink("f", m.Path("l").c_str());
        ::readlink(m.Path("l").c_str(), target, sizeof(target));
        ::readlink(m.Path("l").c_str(), target, sizeof(target));
      },
      1, 2);
}

}  // namespace

std::vector<Check> RequestChecks() {
  return {
      {.name = "request.cache_symlinks",
       .summary = "with CACHE_SYMLINKS a symlink's target is asked for once",
       .needs_flags = wire::init_flag::kCacheSymlinks,
       .run = CacheSymlinks},
      {.name = "request.fopen_direct_io",
       .summary = "FOPEN_DIRECT_IO sends every read to the server",
       .run = FopenDirectIo},
      {.name = "request.fopen_keep_cache",
       .summary = "FOPEN_KEEP_CACHE keeps the page cache across opens",
       .run = FopenKeepCache},
      {.name = "request.fopen_noflush",
       .summary = "FOPEN_NOFLUSH: close sends no FLUSH",
       .run = FopenNoflush},
      {.name = "request.fopen_parallel_direct_writes",
       .summary = "FOPEN_PARALLEL_DIRECT_WRITES lets direct writes to one file run at once",
       .run = FopenParallelDirectWrites},
      {.name = "request.interrupt",
       .summary = "a signal to a client blocked in a request sends INTERRUPT for it",
       .run = Interrupt},
      {.name = "request.max_pages",
       .summary = "READs are at most max_pages pages, and use them all",
       .needs_flags = wire::init_flag::kMaxPages,
       .run = MaxPages},
      {.name = "request.max_write",
       .summary = "WRITEs never exceed the negotiated max_write",
       .needs_flags = wire::init_flag::kBigWrites,
       .run = MaxWrite},
      {.name = "request.negative_entry",
       .summary = "a negative entry is cached for its timeout",
       .run = NegativeEntry},
      {.name = "request.negative_entry_expires",
       .summary = "a negative entry is looked up again once its timeout passed",
       .run = NegativeEntryExpires},
      {.name = "request.sync_init",
       .summary = "with FUSE_DEV_IOC_SYNC_INIT the kernel sends INIT from inside mount()",
       .run = SyncInit},
      {.name = "request.timeout",
       .summary = "an unanswered request aborts the connection after the negotiated timeout",
       .needs_flags = wire::init_flag::kRequestTimeout,
       .run = RequestTimeout},
      {.name = "request.writeback_cache",
       .summary = "with WRITEBACK_CACHE small writes reach the server as one WRITE",
       .needs_flags = wire::init_flag::kWritebackCache,
       .run = WritebackCache},
  };
}

}  // namespace ringfuse::conform
