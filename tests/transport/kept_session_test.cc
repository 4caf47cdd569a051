// Session::StartKept as a daemon author uses it, with this test as the keeper
// (ConnectionKeeper): a daemon process killed with SIGKILL, the next one recovering the
// connection. For a filesystem whose node ids and fh values mean the same in every process (a
// fixed tree here), everything survives: a file opened before the crash reads on, and, told
// that its names are still valid, the kernel's cached names are used without a LOOKUP. Told
// nothing (the default), the next daemon has every cached name looked up again: the control
// that shows the INC_EPOCH happened. The note and the incarnation reach the next process.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "ringfuse/keeper.h"
#include "ringfuse/session.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::testing {
namespace {

constexpr uint64_t kFile = 2;
constexpr uint64_t kFh = 42;  // the same in every process: a fixed tree needs no state
constexpr std::string_view kContents = "read through a crash";

// What the daemon processes tell the test, in memory shared across fork.
struct Shared {
  std::atomic<int> lookups{0};
  std::atomic<int> reads{0};
  std::atomic<uint32_t> incarnation{0};
  std::atomic<bool> noted{false};  // the daemon's note is on its way to the keeper
  char note[64] = {};
};

// One file, with node id and fh fixed: what any incarnation answers is what the last one did.
class FixedTree : public Handler {
 public:
  explicit FixedTree(Shared& shared) : shared_(shared) {}
  void Lookup(const RequestContext&, const op::Lookup& args, EntryReply reply) override {
    ++shared_.lookups;
    if (args.name != "file") return reply.Error(ENOENT);
    reply.Ok(MakeEntry(kFile, 1, RegularFileAttr(kFile, kContents.size()), Timeout{3600},
                       Timeout{3600}));
  }
  void Getattr(const RequestContext& context, const op::Getattr&, AttrReply reply) override {
    reply.Ok(MakeAttrOut(
        context.nodeid() == kFile ? RegularFileAttr(kFile, kContents.size()) : RootDirectoryAttr(),
        Timeout{3600}));
  }
  void Open(const RequestContext&, const op::Open&, OpenReply reply) override {
    reply.Ok(MakeOpenOut(kFh, wire::kFopenDirectIo));  // every read reaches the daemon
  }
  void Read(const RequestContext&, const op::Read& args, DataReply reply) override {
    ++shared_.reads;
    if (args.fh() != kFh) return reply.Error(EBADF);
    const uint64_t start = std::min<uint64_t>(args.in.offset, kContents.size());
    const uint64_t end = std::min<uint64_t>(start + args.in.size, kContents.size());
    reply.Ok(AsBytes(kContents.substr(start, end - start)));
  }
  void Release(const RequestContext&, const op::Release&, EmptyReply reply) override { reply.Ok(); }

 private:
  Shared& shared_;
};

// Kills what the test started and detaches the mount, whatever happens.
struct Leftovers {
  pid_t daemon = -1;
  std::string mountpoint;
  ~Leftovers() {
    if (daemon > 0) {
      ::kill(daemon, SIGKILL);
      ::waitpid(daemon, nullptr, 0);
    }
    if (!mountpoint.empty()) {
      ::umount2(mountpoint.c_str(), MNT_DETACH);
      ::rmdir(mountpoint.c_str());
    }
  }
};

class KeptSession : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    RINGFUSE_SKIP_UNLESS_KERNEL();
    void* memory =
        ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(memory, MAP_FAILED);
    shared_ = new (memory) Shared;
    char directory[] = "/tmp/kept-session.XXXXXX";
    ASSERT_NE(::mkdtemp(directory), nullptr);
    leftovers_.mountpoint = directory;
  }
  void TearDown() override {
    if (shared_ != nullptr) ::munmap(shared_, sizeof(Shared));
  }

  // Starts a daemon process (fork: this test has no other thread) that serves the mount kept by
  // keeper_, telling it `names_still_valid` if it recovers; returns once the keeper holds the
  // connection and the daemon serves it.
  void StartDaemon(bool names_still_valid) {
    int ends[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(ends[0]);
      ServeInChild(ends[1], names_still_valid);
    }
    ::close(ends[1]);
    leftovers_.daemon = pid;
    const int socket = ends[0];
    // hello, then the deposit or the "serving" of a recovered connection
    for (int message = 0; message < 2; ++message) {
      pollfd readable{socket, POLLIN, 0};
      ASSERT_EQ(::poll(&readable, 1, 10000), 1) << "the daemon said nothing for 10 s";
      const absl::Status served = keeper_.ServeOne(socket);
      ASSERT_TRUE(served.ok()) << served;
    }
    ASSERT_TRUE(keeper_.daemon_serves());
    keeper_socket_.reset(socket);  // kept open, as ringfuse-ctl supervise does
  }

  [[noreturn]] void ServeInChild(int keeper_socket, bool names_still_valid) {
    FixedTree fs(*shared_);
    SessionOptions options;
    options.mount.mountpoint = leftovers_.mountpoint;
    options.transport = TransportKind::kThreads;
    absl::StatusOr<std::unique_ptr<Session>> session = Session::StartKept(
        keeper_socket, options, fs, [&](const CrashRecovery& crash) -> absl::StatusOr<Recovered> {
          shared_->incarnation = crash.incarnation;
          std::strncpy(shared_->note, crash.note.c_str(), sizeof(shared_->note) - 1);
          return Recovered{names_still_valid};
        });
    if (!session.ok()) {
      std::fprintf(stderr, "kept session: %s\n", session.status().ToString().c_str());
      ::_exit(1);
    }
    if (!(*session)
             ->UpdateKeptNote("left by incarnation " + std::to_string((*session)->incarnation()))
             .ok()) {
      ::_exit(2);
    }
    shared_->noted = true;
    (*session)->Wait();
    ::_exit(0);
  }

  // Once it has sent its note; then reads what the daemon sent before it died, as ringfuse-ctl
  // supervise does.
  void KillDaemon() {
    for (int waited_ms = 0; !shared_->noted && waited_ms < 10000; ++waited_ms) ::usleep(1000);
    ASSERT_TRUE(shared_->noted) << "the daemon did not note anything within 10 s";
    shared_->noted = false;
    ASSERT_EQ(::kill(leftovers_.daemon, SIGKILL), 0);
    ASSERT_EQ(::waitpid(leftovers_.daemon, nullptr, 0), leftovers_.daemon);
    leftovers_.daemon = -1;
    absl::Status served;
    while ((served = keeper_.ServeOne(keeper_socket_.get())).ok()) {
    }
    EXPECT_TRUE(absl::IsNotFound(served)) << served;
  }

  std::string Path(const std::string& name) const { return leftovers_.mountpoint + "/" + name; }

  Shared* shared_ = nullptr;
  ConnectionKeeper keeper_;
  base::UniqueFd keeper_socket_;
  Leftovers leftovers_;
};

TEST_P(KeptSession, AFixedTreeSurvivesACrashWholeAndCachedNamesStayWhenTheDaemonSaysSo) {
  const bool names_still_valid = GetParam();
  ASSERT_NO_FATAL_FAILURE(StartDaemon(names_still_valid));
  struct stat attr {};
  ASSERT_EQ(::stat(Path("file").c_str(), &attr), 0) << std::strerror(errno);
  const int lookups_before = shared_->lookups.load();
  ASSERT_GE(lookups_before, 1);
  const base::UniqueFd opened_before(::open(Path("file").c_str(), O_RDONLY));
  ASSERT_TRUE(opened_before.valid()) << std::strerror(errno);

  ASSERT_NO_FATAL_FAILURE(KillDaemon());
  ASSERT_NO_FATAL_FAILURE(StartDaemon(names_still_valid));
  EXPECT_EQ(shared_->incarnation.load(), 1u);
  EXPECT_STREQ(shared_->note, "left by incarnation 0");

  char buffer[64] = {};
  const int reads_before = shared_->reads.load();
  EXPECT_EQ(::pread(opened_before.get(), buffer, sizeof(buffer), 0),
            static_cast<ssize_t>(kContents.size()))
      << std::strerror(errno);
  EXPECT_EQ(std::string_view(buffer), kContents);
  EXPECT_GT(shared_->reads.load(), reads_before) << "the read did not reach the new daemon";
  ASSERT_EQ(::stat(Path("file").c_str(), &attr), 0) << std::strerror(errno);
  if (names_still_valid) {
    EXPECT_EQ(shared_->lookups.load(), lookups_before) << "a name the kernel cached was looked up";
  } else {
    EXPECT_GT(shared_->lookups.load(), lookups_before) << "the cached names were not made stale";
  }
}

INSTANTIATE_TEST_SUITE_P(, KeptSession, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? "NamesStillValid" : "NamesMadeStale";
                         });

}  // namespace
}  // namespace ringfuse::testing
