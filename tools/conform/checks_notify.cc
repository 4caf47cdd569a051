// Notifications, each proven from the client's side: what the client sees (or what the kernel
// asks the server) changes after the notification, and did not before it, the control that
// shows the cache was holding.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/fd.h"
#include "tools/conform/check.h"
#include "tools/conform/context.h"
#include "tools/conform/fixture.h"
#include "tools/conform/invalidation.h"

namespace ringfuse::conform {

namespace {

constexpr int kNames = 16;

// Stats root/n<i> and dir/n<i> for every i.
void StatAll(const Mounted& mount) {
  for (int i = 0; i < kNames; ++i) {
    struct stat st {};
    ::stat(mount.Path(absl::StrCat("n", i)).c_str(), &st);
    ::stat(mount.Path(absl::StrCat("dir/n", i)).c_str(), &st);
  }
}

// Whether every name was looked up `times` times.
bool EachLookedUp(CheckContext& context, const MemFs& fs, uint64_t dir, uint64_t times,
                  std::string_view when) {
  int wrong = 0;
  for (int i = 0; i < kNames; ++i) {
    const std::string name = absl::StrCat("n", i);
    for (uint64_t parent : {wire::kRootId, dir}) {
      const uint64_t count = fs.LookupCount(parent, name);
      if (count != times && wrong++ < 3) {
        context.Evidence(absl::StrFormat("%s: %s%s looked up %d times", when,
                                         parent == dir ? "dir/" : "", name, count));
      }
    }
  }
  return context.Expect(wrong == 0, absl::StrFormat("%s: every name looked up %d times (%d not)",
                                                    when, times, wrong));
}

void IncEpoch(CheckContext& context) {
  ExpectEachCachedNameLookedUpOnceAfter(context, [](Notifier& n) { return n.IncEpoch(); });
}

void InvalEntry(CheckContext& context) {
  MemFs fs(Cached());
  const uint64_t old_node = fs.AddFile(wire::kRootId, "a", "old");
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return;
  context.Expect(InodeOf(mount->Path("a")) == old_node, "the name is served");
  fs.Remove(wire::kRootId, "a");
  const uint64_t new_node = fs.AddFile(wire::kRootId, "a", "new");
  context.Expect(InodeOf(mount->Path("a")) == old_node,
                 "before INVAL_ENTRY the kernel keeps the cached name (control)");
  const absl::Status sent = mount->notifier().InvalEntry(wire::kRootId, "a");
  context.Expect(sent.ok(), absl::StrCat("INVAL_ENTRY is accepted: ", sent.ToString()));
  context.Expect(InodeOf(mount->Path("a")) == new_node, "after INVAL_ENTRY the new node shows");
  context.Expect(fs.LookupCount(wire::kRootId, "a") == 2, "the name was looked up again once");
}

// A file of three pages, read whole into the page cache (kept across opens), then changed behind
// the kernel's back; `invalidate` is the notification, which must make the client see `expected`.
void ExpectPagesAfter(
    CheckContext& context, const std::function<absl::Status(Notifier&, uint64_t)>& invalidate,
    const std::function<std::string(const std::string&, const std::string&)>& expected) {
  MemFs fs(Cached(wire::kFopenKeepCache));
  const std::string before = KnownBytes(3 * 4096, 'a'), after = KnownBytes(3 * 4096, 'n');
  const uint64_t node = fs.AddFile(wire::kRootId, "f", before);
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return;
  const std::string path = mount->Path("f");
  context.Expect(ReadAt(path, before.size()) == before, "the file reads whole");
  fs.SetContents(node, after);
  context.Expect(ReadAt(path, before.size()) == before,
                 "before the notification the cached pages are read (control)");
  const absl::Status sent = invalidate(mount->notifier(), node);
  context.Expect(sent.ok(), absl::StrCat("the notification is accepted: ", sent.ToString()));
  context.Expect(ReadAt(path, before.size()) == expected(before, after),
                 "after the notification the client reads what it invalidated anew");
}

void InvalInodeWhole(CheckContext& context) {
  ExpectPagesAfter(
      context, [](Notifier& n, uint64_t node) { return n.InvalInode(node, 0, 0); },
      [](const std::string&, const std::string& after) { return after; });
}

void InvalInodeRange(CheckContext& context) {
  ExpectPagesAfter(
      context, [](Notifier& n, uint64_t node) { return n.InvalInode(node, 4096, 4096); },
      [](const std::string& before, const std::string& after) {
        return before.substr(0, 4096) + after.substr(4096, 4096) + before.substr(8192);
      });
}

void InvalInodeAttributes(CheckContext& context) {
  MemFs fs(Cached());
  const uint64_t node = fs.AddFile(wire::kRootId, "f", "short");
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return;
  struct stat st {};
  ::stat(mount->Path("f").c_str(), &st);
  fs.SetContents(node, "much longer now");
  ::stat(mount->Path("f").c_str(), &st);
  context.Expect(st.st_size == 5, "before INVAL_INODE the cached size shows (control)");
  const absl::Status sent = mount->notifier().InvalInode(node);
  context.Expect(sent.ok(), absl::StrCat("INVAL_INODE is accepted: ", sent.ToString()));
  const size_t mark = mount->log().Mark();
  ::stat(mount->Path("f").c_str(), &st);
  context.Expect(st.st_size == 15, "after INVAL_INODE (attributes) the new size shows");
  context.Expect(mount->log().CountSince(mark, Opcode::kGetattr) == 1,
                 "the attributes were asked for again, once");
}

void Delete(CheckContext& context) {
  MemFs fs(Cached());
  const uint64_t node = fs.AddFile(wire::kRootId, "a", "x");
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return;
  context.Expect(InodeOf(mount->Path("a")) == node, "the name is served");
  fs.Remove(wire::kRootId, "a");
  context.Expect(InodeOf(mount->Path("a")) == node,
                 "before DELETE the kernel keeps the cached name (control)");
  const absl::Status sent = mount->notifier().Delete(wire::kRootId, node, "a");
  context.Expect(sent.ok(), absl::StrCat("DELETE is accepted: ", sent.ToString()));
  struct stat st {};
  context.Expect(::stat(mount->Path("a").c_str(), &st) != 0 && errno == ENOENT,
                 "after DELETE the name is gone (ENOENT)");
}

void Store(CheckContext& context) {
  MemFs fs(Cached(wire::kFopenKeepCache));
  const std::string stored = KnownBytes(4096, 's');
  const uint64_t node = fs.AddFile(wire::kRootId, "f", KnownBytes(8192, 'a'));
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return;
  InodeOf(mount->Path("f"));  // the kernel must know the inode to store into it
  const absl::Status sent = mount->notifier().Store(
      node, 0, ConstBytes(reinterpret_cast<const std::byte*>(stored.data()), stored.size()));
  context.Expect(sent.ok(), absl::StrCat("STORE is accepted: ", sent.ToString()));
  const size_t mark = mount->log().Mark();
  context.Expect(ReadAt(mount->Path("f"), 4096) == stored, "the client reads the stored bytes");
  mount->log().Settle(std::chrono::milliseconds(50));
  for (const RequestLog::Entry& entry : mount->log().Since(mark)) {
    if (entry.opcode == static_cast<uint32_t>(Opcode::kRead)) context.Evidence(entry.line);
  }
}

void Retrieve(CheckContext& context) {
  MemFs fs(Cached(wire::kFopenKeepCache));
  const std::string contents = KnownBytes(8192, 'r');
  const uint64_t node = fs.AddFile(wire::kRootId, "f", contents);
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return;
  context.Expect(ReadAt(mount->Path("f"), 8192) == contents, "the file reads whole");
  absl::StatusOr<std::vector<std::byte>> pages = mount->notifier().Retrieve(node, 0, 4096);
  context.Expect(pages.ok(), absl::StrCat("RETRIEVE is answered: ", pages.status().ToString()));
  if (!pages.ok()) return;
  const std::string got(reinterpret_cast<const char*>(pages->data()), pages->size());
  context.Evidence(absl::StrFormat("RETRIEVE gave %d bytes", got.size()));
  context.Expect(got == contents.substr(0, 4096), "RETRIEVE gives the cached bytes back");
}

// MemFs whose files are not readable until Ready: POLL answers no event and keeps the kernel's
// handle, which Ready then notifies.
class PollingFs : public MemFs {
 public:
  using MemFs::MemFs;
  void Poll(const RequestContext&, const op::Poll& args, PollReply reply) override {
    if (ready_) return reply.Ok(POLLIN);
    if (args.kernel_handle()) handle_ = *args.kernel_handle();
    reply.Ok(0);
  }
  std::atomic<bool> ready_{false};
  std::atomic<uint64_t> handle_{0};
};

void Poll(CheckContext& context) {
  PollingFs fs(Cached());
  fs.AddFile(wire::kRootId, "f", "x");
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return;
  const base::UniqueFd file(::open(mount->Path("f").c_str(), O_RDONLY | O_CLOEXEC));
  const size_t mark = mount->log().Mark();
  std::future<short> woken = std::async(std::launch::async, [&] {
    pollfd ready{file.get(), POLLIN, 0};
    return ::poll(&ready, 1, 10000) == 1 ? ready.revents : short{0};
  });
  context.Expect(
      mount->log().WaitFor(mark, Opcode::kPoll) && WaitUntil([&] { return fs.handle_ != 0; }),
      "the client's poll sends POLL with a kernel handle");
  context.Expect(woken.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout,
                 "the client waits while no event is ready (control)");
  fs.ready_ = true;
  const absl::Status sent = mount->notifier().Poll(fs.handle_);
  context.Expect(sent.ok(), absl::StrCat("POLL is accepted: ", sent.ToString()));
  context.Expect(woken.wait_for(std::chrono::seconds(5)) == std::future_status::ready &&
                     (woken.get() & POLLIN),
                 "the notification wakes the client's poll with POLLIN");
}

void Prune(CheckContext& context) {
  MemFs fs(Cached());
  std::vector<uint64_t> nodes;
  for (int i = 0; i < kNames; ++i)
    nodes.push_back(fs.AddFile(wire::kRootId, absl::StrCat("p", i), ""));
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return;
  for (int i = 0; i < kNames; ++i) InodeOf(mount->Path(absl::StrCat("p", i)));
  context.Expect(fs.KernelRefs(nodes[0]) == 1, "the kernel holds a lookup of each (control)");
  const absl::Status sent = mount->notifier().Prune(nodes);
  context.Expect(sent.ok(), absl::StrCat("PRUNE is accepted: ", sent.ToString()));
  auto still_held = [&] {
    int held = 0;
    for (uint64_t node : nodes) held += fs.KernelRefs(node) != 0;
    return held;
  };
  WaitUntil([&] { return still_held() == 0; });
  const int held = still_held();
  context.Expect(held == 0, absl::StrFormat("FORGETs follow for every pruned node (%d still "
                                            "held)",
                                            held));
}

// Holds the first READ until released; the kernel is asked to resend it meanwhile.
void Resend(CheckContext& context) {
  MemFs fs(Cached(wire::kFopenDirectIo));
  fs.AddFile(wire::kRootId, "f", "resent");
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> held{false};
  fs.SetBeforeOp([&](Opcode opcode) {
    if (opcode == Opcode::kRead && !held.exchange(true))
      released.wait_for(std::chrono::seconds(10));
  });
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return release.set_value();
  const size_t mark = mount->log().Mark();
  std::future<std::string> read =
      std::async(std::launch::async, [&] { return ReadAt(mount->Path("f"), 64); });
  context.Expect(mount->log().WaitFor(mark, Opcode::kRead), "the client's read sends READ");
  const size_t resend_mark = mount->log().Mark();
  const absl::Status sent = mount->notifier().Resend();
  context.Expect(sent.ok(), absl::StrCat("RESEND is accepted: ", sent.ToString()));
  const bool again = mount->log().WaitFor(resend_mark, Opcode::kRead, std::chrono::seconds(2));
  release.set_value();
  context.Expect(read.get() == "resent", "the client's read completes with the file's bytes");
  if (!again && context.transport() == TransportKind::kUringCmd) {
    return context.NotOffered(
        "the kernel resends only requests on /dev/fuse's processing lists, not those delivered "
        "over the uring-cmd rings (fuse_resend in fs/fuse/dev.c walks fc->devices)");
  }
  bool marked = false;
  for (const RequestLog::Entry& entry : mount->log().Since(resend_mark)) {
    context.Evidence(entry.line);
    marked |= entry.opcode == static_cast<uint32_t>(Opcode::kRead) &&
              (entry.unique & wire::kUniqueResend);
  }
  context.Expect(again, "the held READ is sent again");
  context.Expect(marked, "the READ sent again carries the resend bit in its unique");
}

}  // namespace

void ExpectEachCachedNameLookedUpOnceAfter(CheckContext& context, const Invalidate& invalidate) {
  MemFs fs(Cached());
  const uint64_t dir = fs.AddDir(wire::kRootId, "dir");
  for (int i = 0; i < kNames; ++i) {
    fs.AddFile(wire::kRootId, absl::StrCat("n", i), "");
    fs.AddFile(dir, absl::StrCat("n", i), "");
  }
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return;
  StatAll(*mount);
  StatAll(*mount);
  EachLookedUp(context, fs, dir, 1, "cached, before the invalidation (control)");
  const absl::Status sent = invalidate(mount->notifier());
  context.Expect(sent.ok(), absl::StrCat("the invalidation is accepted: ", sent.ToString()));
  StatAll(*mount);
  StatAll(*mount);
  EachLookedUp(context, fs, dir, 2, "after the invalidation, stat twice");
  context.Expect(fs.LookupCount(wire::kRootId, "dir") == 2,
                 "the directory itself was looked up again once");
}

std::vector<Check> NotifyChecks() {
  return {
      {.name = "notify.delete",
       .summary = "DELETE makes a cached name answer ENOENT",
       .needs_minor = 18,
       .run = Delete},
      {.name = "notify.inc_epoch",
       .summary = "INC_EPOCH makes every cached name be looked up again, exactly once",
       .needs_minor = 44,
       .run = IncEpoch},
      {.name = "notify.inval_entry",
       .summary = "INVAL_ENTRY makes a cached name be looked up again",
       .run = InvalEntry},
      {.name = "notify.inval_inode_attributes",
       .summary = "INVAL_INODE with offset -1 makes cached attributes be asked for again",
       .run = InvalInodeAttributes},
      {.name = "notify.inval_inode_range",
       .summary = "INVAL_INODE of one page drops that page of the cache and keeps the others",
       .run = InvalInodeRange},
      {.name = "notify.inval_inode_whole",
       .summary = "INVAL_INODE from offset 0 drops every cached page of a file",
       .run = InvalInodeWhole},
      {.name = "notify.poll", .summary = "POLL wakes a client blocked in poll(2)", .run = Poll},
      {.name = "notify.prune",
       .summary = "PRUNE of unused nodes makes the kernel FORGET them",
       .needs_minor = 45,
       .run = Prune},
      {.name = "notify.resend",
       .summary = "RESEND sends a request in flight again, with the resend bit",
       .needs_flags = wire::init_flag::kHasResend,
       .run = Resend},
      {.name = "notify.retrieve",
       .summary = "RETRIEVE gives back the bytes of the page cache",
       .needs_minor = 15,
       .run = Retrieve},
      {.name = "notify.store",
       .summary = "STORE puts bytes into the page cache that a client then reads",
       .needs_minor = 15,
       .run = Store},
  };
}

}  // namespace ringfuse::conform
