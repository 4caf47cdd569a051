// Every notification, proven by its effect as seen through a real mount, over each transport.
//
// MemFs answers with long entry and attribute timeouts, so the kernel caches what it is told; the
// tests then change the tree behind the kernel's back and show that the mount keeps the stale view
// until the notification arrives (the negative control), and sees the server's truth after it.
#include "ringfuse/notify.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "examples/memfs/memfs.h"
#include "gtest/gtest.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::testing {
namespace {

using examples::MemFs;
using std::chrono::milliseconds;
using namespace std::chrono_literals;

// How long a client call that should return at once may take before the test fails instead.
constexpr milliseconds kClientBound = 10s;
// Long enough that nothing the kernel caches expires during a test.
constexpr Timeout kHour{3600, 0};
// The kernel marks a request that it resends by setting this bit in its unique.
constexpr uint64_t kUniqueResend = uint64_t{1} << 63;

MemFs::Options Caching(uint32_t open_flags = 0) {
  MemFs::Options options;
  options.entry = kHour;
  options.attr = kHour;
  options.open_flags = open_flags;
  return options;
}

// Polls `done` until it holds or `bound` passes; for effects that arrive asynchronously.
bool WaitUntil(const std::function<bool()>& done, milliseconds bound = kClientBound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

// ---- Client side: what a program sees through the mount ----

struct StatResult {
  int error = 0;
  off_t size = -1;
};

StatResult StatPath(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return {errno};
  return {0, st.st_size};
}

// Opens, reads everything, closes: each call goes through the page cache anew.
std::string ReadPath(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return absl::StrFormat("<open: %s>", std::strerror(errno));
  std::string data;
  char buffer[65536];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) data.append(buffer, n);
  if (n < 0) data = absl::StrFormat("<read: %s>", std::strerror(errno));
  ::close(fd);
  return data;
}

// How many of `paths` stat(2) fails on.
size_t StatFailures(const std::vector<std::string>& paths) {
  size_t failures = 0;
  for (const std::string& path : paths) failures += StatPath(path).error != 0;
  return failures;
}

struct PollResult {
  int ready = -1;  // poll(2)'s answer
  short revents = 0;
  milliseconds waited{0};
  int error = 0;
};

PollResult PollForInput(const std::string& path, milliseconds timeout) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return {.error = errno};
  pollfd wanted{fd, POLLIN, 0};
  const auto start = std::chrono::steady_clock::now();
  PollResult result;
  result.ready = ::poll(&wanted, 1, static_cast<int>(timeout.count()));
  if (result.ready < 0) result.error = errno;
  result.waited =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  result.revents = wanted.revents;
  ::close(fd);
  return result;
}

std::vector<std::string> Numbered(const std::string& prefix, int count) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.push_back(absl::StrFormat("%s%05d", prefix, i));
  return names;
}

::testing::AssertionResult EveryLookupCountIs(const MemFs& fs, uint64_t parent,
                                              const std::vector<std::string>& names,
                                              uint64_t expected) {
  size_t wrong = 0;
  std::string examples;
  for (const std::string& name : names) {
    const uint64_t count = fs.LookupCount(parent, name);
    if (count != expected && ++wrong <= 5) absl::StrAppendFormat(&examples, " %s:%u", name, count);
  }
  if (wrong == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << wrong << " of " << names.size() << " names were not looked up exactly " << expected
         << " times; e.g. (name:lookups)" << examples;
}

bool ThreadIsPinnedToOneCpu() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  return ::sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) == 1;
}

// ---- Server side: MemFs with a hook per test ----

// Answers POLL "nothing yet" until told otherwise, keeping the kernel handle to notify.
class PollFs : public MemFs {
 public:
  using MemFs::MemFs;

  void Poll(const RequestContext& /*context*/, const op::Poll& args, PollReply reply) override {
    uint32_t revents;
    {
      std::lock_guard lock(mu_);
      if ((args.in.flags & wire::kPollScheduleNotify) != 0) kernel_handle_ = args.in.kh;
      revents = readable_ ? POLLIN : 0;
    }
    reply.Ok(revents);
  }

  void MakeReadable() {
    std::lock_guard lock(mu_);
    readable_ = true;
  }
  std::optional<uint64_t> kernel_handle() const {
    std::lock_guard lock(mu_);
    return kernel_handle_;
  }

 private:
  mutable std::mutex mu_;
  bool readable_ = false;
  std::optional<uint64_t> kernel_handle_;
};

// Holds every GETATTR of one node until released, recording each unique it arrives with.
class HoldingFs : public MemFs {
 public:
  // A test that fails must not leave a handler stuck: the mount could not stop.
  static constexpr milliseconds kHoldBound = 15s;

  using MemFs::MemFs;

  void Hold(uint64_t nodeid) {
    std::lock_guard lock(mu_);
    held_ = nodeid;
  }
  void ReleaseHeld() {
    {
      std::lock_guard lock(mu_);
      released_ = true;
    }
    released_changed_.notify_all();
  }
  std::vector<uint64_t> held_uniques() const {
    std::lock_guard lock(mu_);
    return held_uniques_;
  }

  void Getattr(const RequestContext& context, const op::Getattr& args, AttrReply reply) override {
    {
      std::unique_lock lock(mu_);
      if (context.nodeid() == held_) {
        held_uniques_.push_back(context.header.unique);
        released_changed_.wait_for(lock, kHoldBound, [this] { return released_; });
      }
    }
    MemFs::Getattr(context, args, std::move(reply));
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable released_changed_;
  uint64_t held_ = 0;
  bool released_ = false;
  std::vector<uint64_t> held_uniques_;
};

// Notes which kind of thread delivers the kernel's NOTIFY_REPLY.
class RetrieveFs : public MemFs {
 public:
  using MemFs::MemFs;

  void NotifyReply(const RequestContext& /*context*/, const op::NotifyReply& /*args*/) override {
    std::lock_guard lock(mu_);
    reply_thread_pinned_ = ThreadIsPinnedToOneCpu();
  }
  std::optional<bool> reply_thread_pinned() const {
    std::lock_guard lock(mu_);
    return reply_thread_pinned_;
  }

 private:
  mutable std::mutex mu_;
  std::optional<bool> reply_thread_pinned_;
};

// While handling MKDIR, queues an INVAL_ENTRY for another name in the same directory: the kernel
// holds that directory's lock until MKDIR is answered, and INVAL_ENTRY needs it.
class NotifyingMkdirFs : public MemFs {
 public:
  // How long the handler lets the queued notification try to get through before it replies.
  static constexpr milliseconds kLockProbe = 100ms;

  using MemFs::MemFs;

  void InvalidateOnMkdir(Notifier* notifier, std::string name) {
    std::lock_guard lock(mu_);
    notifier_ = notifier;
    name_ = std::move(name);
  }
  std::optional<absl::Status> answer() const {
    std::lock_guard lock(mu_);
    return answer_;
  }
  bool answered_before_reply() const {
    std::lock_guard lock(mu_);
    return answered_before_reply_;
  }

  void Mkdir(const RequestContext& context, const op::Mkdir& args, EntryReply reply) override {
    Notifier* notifier;
    std::string name;
    {
      std::lock_guard lock(mu_);
      notifier = notifier_;
      name = name_;
    }
    if (notifier != nullptr) {
      absl::StatusOr<Notification> inval = Notification::InvalEntry(context.nodeid(), name);
      if (inval.ok()) {
        notifier->Queue(*inval, [this](absl::Status status) {
          std::lock_guard lock(mu_);
          answer_ = std::move(status);
        });
      }
      std::this_thread::sleep_for(kLockProbe);
      std::lock_guard lock(mu_);
      answered_before_reply_ = answer_.has_value();
    }
    MemFs::Mkdir(context, args, std::move(reply));
  }

 private:
  mutable std::mutex mu_;
  Notifier* notifier_ = nullptr;
  std::string name_;
  std::optional<absl::Status> answer_;
  bool answered_before_reply_ = false;
};

// ---- The fixture ----

class Notify : public TransportTest {
 protected:
  void SetUp() override {
    TransportTest::SetUp();
    if (IsSkipped()) return;
  }

  // Mounts `fs` over the transport under test; null (and a failure) if that fails.
  template <typename Fs>
  Fs* Serve(std::unique_ptr<Fs> fs, SessionOptions options = {}) {
    Fs* served = fs.get();
    fs_ = std::move(fs);
    absl::StatusOr<std::unique_ptr<ServedMount>> mount =
        ServedMount::Start(*fs_, GetParam(), std::move(options));
    if (!mount.ok()) {
      ADD_FAILURE() << mount.status();
      return nullptr;
    }
    mount_ = std::move(*mount);
    EXPECT_EQ(mount_->session().transport_kind(), GetParam());
    return served;
  }

  std::string Path(const std::string& relative) const { return mount_->Path(relative); }
  Notifier& notifier() { return mount_->session().notifier(); }

  // Runs `call` on a client thread. The fixture joins the thread only after the mount is gone,
  // so a client stuck in the kernel cannot hang the test (as std::async's future would, whose
  // destructor waits).
  template <typename F>
  std::future<std::invoke_result_t<F>> Client(F call) {
    std::packaged_task<std::invoke_result_t<F>()> task(std::move(call));
    std::future<std::invoke_result_t<F>> result = task.get_future();
    clients_.emplace_back(std::move(task));
    return result;
  }

  // The client's result, or nothing (and a failure) when it takes longer than `bound`.
  template <typename T>
  static std::optional<T> Await(std::future<T> result, milliseconds bound = kClientBound) {
    if (result.wait_for(bound) != std::future_status::ready) {
      ADD_FAILURE() << "a client call through the mount did not return within " << bound.count()
                    << " ms";
      return std::nullopt;
    }
    return result.get();
  }

  StatResult Stat(const std::string& relative) {
    return Await(Client([path = Path(relative)] { return StatPath(path); }))
        .value_or(StatResult{ETIMEDOUT});
  }
  std::string Read(const std::string& relative) {
    return Await(Client([path = Path(relative)] { return ReadPath(path); }))
        .value_or("<timed out>");
  }
  // Stats every name in `dir`; returns how many failed.
  size_t StatEach(const std::string& dir, const std::vector<std::string>& names) {
    std::vector<std::string> paths;
    for (const std::string& name : names) paths.push_back(Path(dir + "/" + name));
    return Await(Client([paths] { return StatFailures(paths); }), 30s).value_or(names.size());
  }

  // Destroyed in reverse: the mount first, then the clients it released, then the switch and
  // the filesystem, which both must outlive the mount.
  std::unique_ptr<MemFs> fs_;
  std::vector<std::jthread> clients_;
  std::unique_ptr<ServedMount> mount_;
};

// ---- INVAL_INODE ----

TEST_P(Notify, InvalInodeRefreshesCachedAttributes) {
  MemFs* fs = Serve(std::make_unique<MemFs>(Caching()));
  ASSERT_NE(fs, nullptr);
  const uint64_t file = fs->AddFile(wire::kRootId, "f", "abc");
  EXPECT_EQ(Stat("f").size, 3);
  fs->SetContents(file, "abcdef");
  EXPECT_EQ(Stat("f").size, 3) << "the kernel should still trust its cached attributes";

  ASSERT_TRUE(notifier().InvalInode(file).ok());
  EXPECT_EQ(Stat("f").size, 6);
}

TEST_P(Notify, InvalInodeDropsCachedPages) {
  MemFs* fs = Serve(std::make_unique<MemFs>(Caching(wire::kFopenKeepCache)));
  ASSERT_NE(fs, nullptr);
  // Same length: the cached size must not be what hides the new bytes.
  const uint64_t file = fs->AddFile(wire::kRootId, "f", "old-data");
  EXPECT_EQ(Read("f"), "old-data");
  fs->SetContents(file, "new-data");
  EXPECT_EQ(Read("f"), "old-data") << "keep_cache should serve the second read from the cache";
  EXPECT_EQ(fs->RequestCount(Opcode::kRead), 1u);

  ASSERT_TRUE(notifier().InvalInode(file, 0, 0).ok());
  EXPECT_EQ(Read("f"), "new-data");
  EXPECT_EQ(fs->RequestCount(Opcode::kRead), 2u);
}

TEST_P(Notify, InvalInodeOfUncachedNodeIsNotFound) {
  MemFs* fs = Serve(std::make_unique<MemFs>(Caching()));
  ASSERT_NE(fs, nullptr);
  const uint64_t file = fs->AddFile(wire::kRootId, "never-looked-up", "x");
  EXPECT_TRUE(absl::IsNotFound(notifier().InvalInode(file)));
}

// ---- INVAL_ENTRY ----

TEST_P(Notify, InvalEntryDropsCachedName) {
  MemFs* fs = Serve(std::make_unique<MemFs>(Caching()));
  ASSERT_NE(fs, nullptr);
  fs->AddFile(wire::kRootId, "f", "x");
  EXPECT_EQ(Stat("f").error, 0);
  ASSERT_TRUE(fs->Remove(wire::kRootId, "f"));
  EXPECT_EQ(Stat("f").error, 0) << "the kernel should still trust its cached entry";

  ASSERT_TRUE(notifier().InvalEntry(wire::kRootId, "f").ok());
  EXPECT_EQ(Stat("f").error, ENOENT);
}

TEST_P(Notify, InvalEntryExpireOnlyForcesFreshLookup) {
  MemFs* fs = Serve(std::make_unique<MemFs>(Caching()));
  ASSERT_NE(fs, nullptr);
  fs->AddFile(wire::kRootId, "f", "x");
  EXPECT_EQ(Stat("f").error, 0);
  ASSERT_TRUE(fs->Remove(wire::kRootId, "f"));
  EXPECT_EQ(Stat("f").error, 0) << "the kernel should still trust its cached entry";
  EXPECT_EQ(fs->LookupCount(wire::kRootId, "f"), 1u);

  ASSERT_TRUE(notifier().InvalEntry(wire::kRootId, "f", /*expire_only=*/true).ok());
  EXPECT_EQ(Stat("f").error, ENOENT);
  EXPECT_GE(fs->LookupCount(wire::kRootId, "f"), 2u);
}

TEST_P(Notify, InvalEntryOfUncachedNameIsNotFound) {
  MemFs* fs = Serve(std::make_unique<MemFs>(Caching()));
  ASSERT_NE(fs, nullptr);
  fs->AddFile(wire::kRootId, "never-looked-up", "x");
  EXPECT_TRUE(absl::IsNotFound(notifier().InvalEntry(wire::kRootId, "never-looked-up")));
}

// ---- DELETE ----

TEST_P(Notify, DeleteDropsNameOfMatchingChild) {
  MemFs* fs = Serve(std::make_unique<MemFs>(Caching()));
  ASSERT_NE(fs, nullptr);
  const uint64_t file = fs->AddFile(wire::kRootId, "f", "x");
  EXPECT_EQ(Stat("f").error, 0);
  ASSERT_TRUE(fs->Remove(wire::kRootId, "f"));
  EXPECT_EQ(Stat("f").error, 0) << "the kernel should still trust its cached entry";

  ASSERT_TRUE(notifier().Delete(wire::kRootId, file, "f").ok());
  EXPECT_EQ(Stat("f").error, ENOENT);
}

TEST_P(Notify, DeleteWithWrongChildIsNotFoundYetDropsTheName) {
  MemFs* fs = Serve(std::make_unique<MemFs>(Caching()));
  ASSERT_NE(fs, nullptr);
  fs->AddFile(wire::kRootId, "f", "x");
  const uint64_t other = fs->AddFile(wire::kRootId, "other", "y");
  EXPECT_EQ(Stat("f").error, 0);
  EXPECT_EQ(Stat("other").error, 0);

  EXPECT_TRUE(absl::IsNotFound(notifier().Delete(wire::kRootId, other, "f")));
  EXPECT_EQ(Stat("f").error, 0);
  EXPECT_EQ(Stat("other").error, 0);
  // Linux 6.18 invalidates the dentry before it compares the child's id
  // (fuse_reverse_inval_entry), so even a refused DELETE costs the name its cache entry; the
  // other name keeps its own.
  EXPECT_EQ(fs->LookupCount(wire::kRootId, "f"), 2u);
  EXPECT_EQ(fs->LookupCount(wire::kRootId, "other"), 1u);
}

// ---- STORE and RETRIEVE ----

TEST_P(Notify, StoreFillsPageCacheWithoutRead) {
  MemFs* fs = Serve(std::make_unique<MemFs>(Caching(wire::kFopenKeepCache)));
  ASSERT_NE(fs, nullptr);
  const uint64_t file = fs->AddFile(wire::kRootId, "f", "server!!");
  EXPECT_EQ(Stat("f").size, 8);  // the kernel must know the inode to store into it

  // The whole file from offset 0: the kernel marks the page up to date.
  const std::string stored = "stored!!";
  ASSERT_TRUE(notifier().Store(file, 0, AsBytes(std::string_view(stored))).ok());
  EXPECT_EQ(Read("f"), stored);
  EXPECT_EQ(fs->RequestCount(Opcode::kRead), 0u);
  EXPECT_EQ(fs->Contents(file), "server!!");
}

TEST_P(Notify, StoreIntoUncachedNodeIsNotFound) {
  MemFs* fs = Serve(std::make_unique<MemFs>(Caching(wire::kFopenKeepCache)));
  ASSERT_NE(fs, nullptr);
  const uint64_t file = fs->AddFile(wire::kRootId, "never-looked-up", "x");
  EXPECT_TRUE(absl::IsNotFound(notifier().Store(file, 0, AsBytes(std::string_view("y")))));
}

TEST_P(Notify, RetrieveReturnsCachedBytes) {
  RetrieveFs* fs = Serve(std::make_unique<RetrieveFs>(Caching(wire::kFopenKeepCache)));
  ASSERT_NE(fs, nullptr);
  const uint64_t file = fs->AddFile(wire::kRootId, "f", "cached bytes");
  EXPECT_EQ(Read("f"), "cached bytes");
  // Only the kernel still has these bytes: a retrieve served from the server would differ.
  fs->SetContents(file, "the server moved on");

  absl::StatusOr<std::vector<std::byte>> retrieved = notifier().Retrieve(file, 0, 4096);
  ASSERT_TRUE(retrieved.ok()) << retrieved.status();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(retrieved->data()), retrieved->size()),
            "cached bytes");
  EXPECT_EQ(fs->RequestCount(Opcode::kRead), 1u);

  // Over uring-cmd the kernel sends NOTIFY_REPLY over the ring, to a queue thread pinned to its
  // CPU, rather than to the unpinned /dev/fuse reader; tell them apart where the process may use
  // more than one CPU.
  // The notifier hears of NOTIFY_REPLY before the handler does: wait for the handler.
  ASSERT_TRUE(WaitUntil([fs] { return fs->reply_thread_pinned().has_value(); }));
  if (GetParam() == TransportKind::kUringCmd && !ThreadIsPinnedToOneCpu()) {
    EXPECT_TRUE(*fs->reply_thread_pinned()) << "NOTIFY_REPLY did not arrive over the ring";
  }
}

TEST_P(Notify, RetrieveOfUncachedNodeIsNotFound) {
  MemFs* fs = Serve(std::make_unique<MemFs>(Caching(wire::kFopenKeepCache)));
  ASSERT_NE(fs, nullptr);
  const uint64_t file = fs->AddFile(wire::kRootId, "never-looked-up", "x");
  EXPECT_TRUE(absl::IsNotFound(notifier().Retrieve(file, 0, 4096).status()));
}

// ---- POLL ----

TEST_P(Notify, PollWakesWaitingClient) {
  PollFs* fs = Serve(std::make_unique<PollFs>(Caching()));
  ASSERT_NE(fs, nullptr);
  fs->AddFile(wire::kRootId, "f", "x");
  constexpr milliseconds kPollTimeout = 30s;  // far longer than the test waits
  std::future<PollResult> polled =
      Client([path = Path("f"), kPollTimeout] { return PollForInput(path, kPollTimeout); });
  ASSERT_TRUE(WaitUntil([fs] { return fs->kernel_handle().has_value(); }))
      << "no POLL asking to be notified reached the server";
  EXPECT_EQ(polled.wait_for(200ms), std::future_status::timeout)
      << "poll() returned before anything was ready";

  fs->MakeReadable();
  ASSERT_TRUE(notifier().Poll(*fs->kernel_handle()).ok());
  std::optional<PollResult> result = Await(std::move(polled), 5s);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->error, 0);
  EXPECT_EQ(result->ready, 1);
  EXPECT_TRUE(result->revents & POLLIN);
  EXPECT_LT(result->waited, kPollTimeout / 2);
}

// ---- RESEND ----

TEST_P(Notify, ResendDeliversHeldRequestAgain) {
  if (GetParam() == TransportKind::kUringCmd) {
    GTEST_SKIP() << "the kernel resends only requests on /dev/fuse's processing lists; those "
                    "delivered over io_uring sit on the ring queues' own lists and are not resent";
  }
  MemFs::Options options = Caching();
  options.attr = Timeout{0, 0};  // every stat sends a GETATTR
  SessionOptions session;
  session.transport_options.workers = 2;  // one to hold the request, one to take the resent copy
  HoldingFs* fs = Serve(std::make_unique<HoldingFs>(options), session);
  ASSERT_NE(fs, nullptr);
  const uint64_t file = fs->AddFile(wire::kRootId, "f", "data");
  ASSERT_EQ(Stat("f").error, 0);  // looked up now, so that the next stat is a lone GETATTR

  fs->Hold(file);
  absl::Cleanup release = [fs] { fs->ReleaseHeld(); };
  std::future<StatResult> stat = Client([path = Path("f")] { return StatPath(path); });
  ASSERT_TRUE(WaitUntil([fs] { return !fs->held_uniques().empty(); }));
  std::this_thread::sleep_for(200ms);
  ASSERT_EQ(fs->held_uniques().size(), 1u) << "the GETATTR arrived twice before any RESEND";

  ASSERT_TRUE(notifier().Resend().ok());
  ASSERT_TRUE(WaitUntil([fs] { return fs->held_uniques().size() >= 2; }))
      << "the held GETATTR was not delivered again";
  const std::vector<uint64_t> uniques = fs->held_uniques();
  EXPECT_EQ(uniques.size(), 2u);
  EXPECT_EQ(uniques[1], uniques[0] | kUniqueResend);

  fs->ReleaseHeld();
  std::optional<StatResult> result = Await(std::move(stat));
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->error, 0);
  EXPECT_EQ(result->size, 4);
}

// ---- INC_EPOCH ----

TEST_P(Notify, IncEpochForcesFreshLookupOfEveryName) {
  MemFs* fs = Serve(std::make_unique<MemFs>(Caching()));
  ASSERT_NE(fs, nullptr);
  const uint64_t dir = fs->AddDir(wire::kRootId, "d");
  const std::vector<std::string> names = Numbered("file-", 8000);
  for (const std::string& name : names) ASSERT_NE(fs->AddFile(dir, name, ""), 0u);

  ASSERT_EQ(StatEach("d", names), 0u);
  EXPECT_TRUE(EveryLookupCountIs(*fs, dir, names, 1));
  ASSERT_EQ(StatEach("d", names), 0u);
  EXPECT_TRUE(EveryLookupCountIs(*fs, dir, names, 1)) << "the dentry cache should hold";

  ASSERT_TRUE(notifier().IncEpoch().ok());
  ASSERT_EQ(StatEach("d", names), 0u);
  EXPECT_TRUE(EveryLookupCountIs(*fs, dir, names, 2));
  EXPECT_EQ(fs->LookupCount(wire::kRootId, "d"), 2u);
}

// ---- PRUNE ----

TEST_P(Notify, PruneMakesKernelForgetUnusedInode) {
  MemFs* fs = Serve(std::make_unique<MemFs>(Caching()));
  ASSERT_NE(fs, nullptr);
  const uint64_t file = fs->AddFile(wire::kRootId, "f", "x");
  EXPECT_EQ(Stat("f").error, 0);
  EXPECT_EQ(Stat("f").error, 0);
  EXPECT_EQ(fs->LookupCount(wire::kRootId, "f"), 1u);
  EXPECT_EQ(fs->KernelRefs(file), 1u);

  const uint64_t nodeids[] = {file};
  ASSERT_TRUE(notifier().Prune(nodeids).ok());
  EXPECT_TRUE(WaitUntil([&] { return fs->KernelRefs(file) == 0; }, 5s))
      << "no FORGET for the pruned inode";
  EXPECT_EQ(Stat("f").error, 0);
  EXPECT_EQ(fs->LookupCount(wire::kRootId, "f"), 2u);
}

// ---- Batches ----

TEST_P(Notify, BatchInvalidatesEveryCachedName) {
  MemFs* fs = Serve(std::make_unique<MemFs>(Caching()));
  ASSERT_NE(fs, nullptr);
  const uint64_t dir = fs->AddDir(wire::kRootId, "d");
  const std::vector<std::string> names = Numbered("file-", 1000);
  for (const std::string& name : names) ASSERT_NE(fs->AddFile(dir, name, ""), 0u);
  ASSERT_EQ(StatEach("d", names), 0u);
  ASSERT_EQ(StatEach("d", names), 0u);
  EXPECT_TRUE(EveryLookupCountIs(*fs, dir, names, 1)) << "the dentry cache should hold";

  std::vector<Notification> batch;
  for (const std::string& name : names) {
    absl::StatusOr<Notification> inval = Notification::InvalEntry(dir, name);
    ASSERT_TRUE(inval.ok()) << inval.status();
    batch.push_back(*inval);
  }
  const std::vector<absl::Status> statuses = notifier().SendBatch(batch);
  ASSERT_EQ(statuses.size(), names.size());
  size_t failed = 0;
  for (const absl::Status& status : statuses) failed += !status.ok();
  EXPECT_EQ(failed, 0u) << "e.g. " << statuses[0];

  ASSERT_EQ(StatEach("d", names), 0u);
  EXPECT_TRUE(EveryLookupCountIs(*fs, dir, names, 2));
}

TEST_P(Notify, BatchReportsEachAnswerInPlace) {
  MemFs* fs = Serve(std::make_unique<MemFs>(Caching()));
  ASSERT_NE(fs, nullptr);
  const std::vector<std::string> cached = Numbered("cached-", 50);
  const std::vector<std::string> uncached = Numbered("uncached-", 50);
  for (const std::string& name : cached) fs->AddFile(wire::kRootId, name, "");
  for (const std::string& name : uncached) fs->AddFile(wire::kRootId, name, "");
  ASSERT_EQ(StatEach(".", cached), 0u);

  // Alternating: even positions name cached entries, odd ones entries the kernel never saw.
  std::vector<Notification> batch;
  for (size_t i = 0; i < cached.size(); ++i) {
    for (const std::string* name : {&cached[i], &uncached[i]}) {
      absl::StatusOr<Notification> inval = Notification::InvalEntry(wire::kRootId, *name);
      ASSERT_TRUE(inval.ok()) << inval.status();
      batch.push_back(*inval);
    }
  }
  const std::vector<absl::Status> statuses = notifier().SendBatch(batch);
  ASSERT_EQ(statuses.size(), batch.size());
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (i % 2 == 0) {
      EXPECT_TRUE(statuses[i].ok()) << "position " << i << ": " << statuses[i];
    } else {
      EXPECT_TRUE(absl::IsNotFound(statuses[i])) << "position " << i << ": " << statuses[i];
    }
  }
}

// ---- From inside a handler ----

TEST_P(Notify, QueuedFromHandlerDoesNotDeadlock) {
  NotifyingMkdirFs* fs = Serve(std::make_unique<NotifyingMkdirFs>(Caching()));
  ASSERT_NE(fs, nullptr);
  const uint64_t dir = fs->AddDir(wire::kRootId, "d");
  fs->AddFile(dir, "cached", "x");
  ASSERT_EQ(Stat("d/cached").error, 0);
  fs->InvalidateOnMkdir(&notifier(), "cached");

  std::optional<int> made = Await(
      Client([path = Path("d/new")] { return ::mkdir(path.c_str(), 0755) == 0 ? 0 : errno; }));
  ASSERT_TRUE(made.has_value()) << "mkdir hung: the notification deadlocked with it";
  EXPECT_EQ(*made, 0);
  // The kernel held d's lock for the whole MKDIR: had the handler sent INVAL_ENTRY itself and
  // waited for the answer, it would never have replied.
  EXPECT_FALSE(fs->answered_before_reply())
      << "INVAL_ENTRY went through while MKDIR held the directory";

  ASSERT_TRUE(WaitUntil([fs] { return fs->answer().has_value(); }))
      << "the queued notification was never sent";
  notifier().Flush();  // nothing left queued: returns at once
  EXPECT_TRUE(fs->answer()->ok()) << *fs->answer();
  EXPECT_EQ(Stat("d/cached").error, 0);
  EXPECT_EQ(fs->LookupCount(dir, "cached"), 2u) << "the name was not invalidated";
}

INSTANTIATE_TEST_SUITE_P(Transports, Notify, kEveryTransport, TransportTestName);

}  // namespace
}  // namespace ringfuse::testing
