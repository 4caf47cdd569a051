// The passthrough filesystem's state across a live handover (daemon/handover/handover_state.h): the
// kernel keeps the node ids and fh values it had, so cached names, open files and directories,
// locks and kernel-passthrough backing ids must all mean the same to the successor. Both
// daemons live in this process, each a PassthroughFs of the same SOURCE with its own session;
// the old one is thrown away after each handover, as the old process exits.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon/handover/handover_state.h"
#include "tests/daemon/client_load.h"
#include "tests/daemon/kernel_passthrough.h"
#include "tests/daemon/passthrough_fixture.h"
#include "tests/daemon/test_files.h"
#include "tests/open_fds.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::OpenFdCount;
using ringfuse::testing::ReadFile;
using ringfuse::testing::WriteFile;

// Names are cached for a minute and attributes not at all: every stat after a handover asks the
// successor about a node id the old daemon gave.
DaemonOptions CachingNames() {
  DaemonOptions options;
  options.entry_timeout = {60, 0};
  options.attr_timeout = {0, 0};
  return options;
}

class PassthroughHandover : public PassthroughMountTest {
 protected:
  void TearDown() override {
    if (successor_ != nullptr) {
      successor_->Stop();
      successor_->Wait();
    }
    successor_.reset();
    successor_fs_.reset();
    PassthroughMountTest::TearDown();
  }

  Session& Serving() { return successor_ != nullptr ? *successor_ : mount_->session(); }

  // Hands the serving daemon's connection and state to a new PassthroughFs. `restore_state`
  // false: the successor ignores the state (the negative control).
  absl::Status HandOver(const DaemonOptions& options, bool restore_state = true) {
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) {
      return absl::InternalError(std::strerror(errno));
    }
    base::UniqueFd old_end(ends[0]), new_end(ends[1]);
    DaemonOptions served = options;
    served.source = source_;
    auto next_fs = std::make_unique<PassthroughFs>(
        base::UniqueFd(::open(source_.c_str(), O_PATH | O_CLOEXEC)), served);
    SessionOptions session = MakeSessionOptions(served);
    session.transport = GetParam();
    session.backing_files = &next_fs->backing_files();
    PassthroughFs* restored = next_fs.get();
    std::future<absl::StatusOr<std::unique_ptr<Session>>> taker =
        std::async(std::launch::async, [&] {
          return Session::TakeOver(
              new_end.get(), session, *restored, [&](HandoverPayload payload) -> absl::Status {
                if (!restore_state) {
                  for (int fd : payload.fds) ::close(fd);
                  return absl::OkStatus();
                }
                return RestoreHandoverState(std::move(payload), *restored).status();
              });
        });
    PassthroughFs& current = successor_fs_ != nullptr ? *successor_fs_ : *fs_;
    absl::StatusOr<HandoverReport> report =
        Serving().HandOver(old_end.get(), [&current] { return SaveHandoverState(current, ""); });
    absl::StatusOr<std::unique_ptr<Session>> taken = taker.get();
    if (!report.ok()) return report.status();
    if (!taken.ok()) return taken.status();
    pauses_.push_back(*report);
    // The old daemon exits: its session and filesystem go, the mount stays.
    successor_ = std::move(*taken);
    if (successor_fs_ != nullptr) {
      previous_.push_back(std::move(successor_fs_));  // its session went with successor_
    } else {
      mount_->ReleaseHandedOverSession();
      fs_.reset();
    }
    successor_fs_ = std::move(next_fs);
    return absl::OkStatus();
  }

  std::unique_ptr<Session> successor_;
  std::unique_ptr<PassthroughFs> successor_fs_;
  std::vector<std::unique_ptr<PassthroughFs>> previous_;
  std::vector<HandoverReport> pauses_;
};

TEST_P(PassthroughHandover, CachedNamesOpenFilesDirectoriesAndLocksSurvive) {
  const DaemonOptions options = CachingNames();
  ASSERT_TRUE(std::filesystem::create_directories(Source("a/b")));
  WriteFile(Source("a/b/file"), "before\n");
  // More than one READDIR's worth, so that the listing goes on through the successor.
  constexpr int kEntries = 2000;
  for (int i = 0; i < kEntries; ++i) {
    WriteFile(Source("a/an-entry-with-a-long-name-" + std::to_string(i)), "");
  }
  ASSERT_EQ(::symlink("b/file", Source("a/link").c_str()), 0);
  Mount(options);
  const struct stat cached = Lstat(Mounted("a/b/file"));
  const base::UniqueFd file(::open(Mounted("a/b/file").c_str(), O_RDWR));
  ASSERT_TRUE(file.valid()) << std::strerror(errno);
  ASSERT_EQ(::flock(file.get(), LOCK_EX), 0) << std::strerror(errno);
  const base::UniqueFd ofd(::open(Mounted("a/b/file").c_str(), O_RDWR));
  struct flock range {};
  range.l_type = F_WRLCK;
  range.l_whence = SEEK_SET;
  range.l_len = 10;
  ASSERT_EQ(::fcntl(ofd.get(), F_OFD_SETLK, &range), 0) << std::strerror(errno);
  DIR* listing = ::opendir(Mounted("a").c_str());
  ASSERT_NE(listing, nullptr);
  std::set<std::string> listed;
  for (int i = 0; i < 10; ++i) listed.insert(::readdir(listing)->d_name);

  ASSERT_TRUE(HandOver(options).ok());

  // The cached name's node id still names the file: the successor answers its GETATTR with no
  // new LOOKUP (after an ESTALE the kernel would have looked the name up again).
  const uint64_t lookups = successor_fs_->inodes().lookups_served();
  EXPECT_EQ(Lstat(Mounted("a/b/file")).st_ino, cached.st_ino);
  EXPECT_EQ(successor_fs_->inodes().lookups_served(), lookups);
  char target[64] = {};
  EXPECT_EQ(::readlink(Mounted("a/link").c_str(), target, sizeof(target)), 6);
  // The open file's fh still works, for writing and reading.
  ASSERT_EQ(::pwrite(file.get(), "after\n", 6, 7), 6) << std::strerror(errno);
  EXPECT_EQ(ReadFile(Source("a/b/file")), "before\nafter\n");
  char back[16] = {};
  EXPECT_EQ(::pread(file.get(), back, sizeof(back), 0), 13) << std::strerror(errno);
  // Its locks are still held: another open cannot take them, until they are let go.
  const base::UniqueFd other(::open(Mounted("a/b/file").c_str(), O_RDWR));
  EXPECT_EQ(::flock(other.get(), LOCK_EX | LOCK_NB), -1);
  EXPECT_EQ(errno, EWOULDBLOCK);
  EXPECT_EQ(::fcntl(other.get(), F_OFD_SETLK, &range), -1);
  EXPECT_EQ(errno, EAGAIN);
  ASSERT_EQ(::flock(file.get(), LOCK_UN), 0);
  EXPECT_EQ(::flock(other.get(), LOCK_EX | LOCK_NB), 0) << std::strerror(errno);
  range.l_type = F_UNLCK;
  ASSERT_EQ(::fcntl(ofd.get(), F_OFD_SETLK, &range), 0);
  range.l_type = F_WRLCK;
  EXPECT_EQ(::fcntl(other.get(), F_OFD_SETLK, &range), 0) << std::strerror(errno);
  // The directory listing goes on where it stood, each entry once.
  for (const dirent* entry; (entry = ::readdir(listing)) != nullptr;) {
    EXPECT_TRUE(listed.insert(entry->d_name).second) << entry->d_name << " listed twice";
  }
  ::closedir(listing);
  EXPECT_EQ(listed.size(), kEntries + 4u);  // the entries, b, link, . and ..
  // A name made after the handover gets a node id of its own.
  WriteFile(Mounted("a/new"), "new\n");
  EXPECT_NE(Lstat(Mounted("a/new")).st_ino, cached.st_ino);
  EXPECT_EQ(ReadFile(Mounted("a/new")), "new\n");
}

// The negative control of the test above: a successor that drops the state knows neither the
// node ids nor the fh values the kernel holds.
TEST_P(PassthroughHandover, ASuccessorWithoutTheStateLosesCachedNamesAndOpenFiles) {
  const DaemonOptions options = CachingNames();
  WriteFile(Source("file"), "before\n");
  Mount(options);
  Lstat(Mounted("file"));
  const base::UniqueFd file(::open(Mounted("file").c_str(), O_RDWR));
  ASSERT_TRUE(file.valid());
  ASSERT_TRUE(HandOver(options, /*restore_state=*/false).ok());
  // The cached node id answers ESTALE, which the VFS retries once with a fresh LOOKUP (so the
  // stat itself succeeds, and the successor counts the lookup).
  const uint64_t lookups = successor_fs_->inodes().lookups_served();
  Lstat(Mounted("file"));
  EXPECT_GT(successor_fs_->inodes().lookups_served(), lookups);
  char back[16];
  EXPECT_EQ(::pread(file.get(), back, sizeof(back), 0), -1);
  EXPECT_EQ(errno, EBADF);
}

// A POSIX lock belongs to the process that took it (here, the test's): a forked child still
// finds it held through the successor, who answers with the holder's pid.
TEST_P(PassthroughHandover, APosixLockIsStillHeldAfterAHandover) {
  const DaemonOptions options = CachingNames();
  WriteFile(Source("file"), "locked\n");
  Mount(options);
  const base::UniqueFd file(::open(Mounted("file").c_str(), O_RDWR));
  struct flock range {};
  range.l_type = F_WRLCK;
  range.l_whence = SEEK_SET;
  ASSERT_EQ(::fcntl(file.get(), F_SETLK, &range), 0) << std::strerror(errno);
  ASSERT_TRUE(HandOver(options).ok());
  const std::string path = Mounted("file");
  const pid_t holder = ::getpid();
  const pid_t child = ::fork();
  if (child == 0) {
    const int fd = ::open(path.c_str(), O_RDWR);
    struct flock wanted {};
    wanted.l_type = F_WRLCK;
    wanted.l_whence = SEEK_SET;
    const bool refused = ::fcntl(fd, F_SETLK, &wanted) == -1 && errno == EAGAIN;
    const bool shown =
        ::fcntl(fd, F_GETLK, &wanted) == 0 && wanted.l_type == F_WRLCK && wanted.l_pid == holder;
    ::_exit(refused && shown ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the lock was lost";
  // Let go through the successor, it is free for others.
  range.l_type = F_UNLCK;
  ASSERT_EQ(::fcntl(file.get(), F_SETLK, &range), 0);
  EXPECT_EQ(successor_fs_->counts().lock_owner_opens, 1u);  // until the owner's FLUSH at close
}

// With -o passthrough the kernel reads and writes an open file through its backing id, which
// the connection keeps across the handover: the successor shares that id with the inode's next
// opens (a second registration of the inode would fail them with EIO) and closes it at the last
// release.
TEST_P(PassthroughHandover, KernelPassthroughOpensKeepTheirBackingIdAcrossAHandover) {
  DaemonOptions options = CachingNames();
  options.passthrough = true;
  WriteFile(Source("file"), "0123456789");
  Mount(options);
  if (absl::Status works = fs_->CheckPassthroughWorks(); !works.ok()) {
    RINGFUSE_SKIP_ONLY_IF_KERNEL_REFUSES_PASSTHROUGH(works);
  }
  const base::UniqueFd before(::open(Mounted("file").c_str(), O_RDWR));
  ASSERT_TRUE(before.valid()) << std::strerror(errno);
  ASSERT_TRUE(HandOver(options).ok());
  const base::UniqueFd after(::open(Mounted("file").c_str(), O_RDWR));
  ASSERT_TRUE(after.valid()) << std::strerror(errno);
  ASSERT_EQ(::pwrite(after.get(), "abc", 3, 0), 3) << std::strerror(errno);
  char back[16] = {};
  ASSERT_EQ(::pread(before.get(), back, sizeof(back), 0), 10) << std::strerror(errno);
  EXPECT_STREQ(back, "abc3456789");
  EXPECT_EQ(successor_fs_->counts().reads + successor_fs_->counts().writes, 0u)
      << "the successor served I/O the kernel should have done through the backing file";
}

// Whatever the bytes of a record, the successor either restores it or refuses it with an error,
// closing every fd it was given: truncated at every length, and with each byte changed.
TEST_P(PassthroughHandover, ABrokenRecordIsRefusedAndLeaksNoFd) {
  const DaemonOptions options = CachingNames();
  ASSERT_TRUE(std::filesystem::create_directories(Source("d/e")));
  WriteFile(Source("d/e/file"), "x");
  Mount(options);
  Lstat(Mounted("d/e/file"));
  const base::UniqueFd file(::open(Mounted("d/e/file").c_str(), O_RDONLY));
  DIR* dir = ::opendir(Mounted("d").c_str());
  ASSERT_NE(dir, nullptr);
  absl::StatusOr<HandoverPayload> saved = SaveHandoverState(*fs_, "");
  ASSERT_TRUE(saved.ok()) << saved.status();
  auto attempt = [&](std::string bytes) {
    HandoverPayload payload{std::move(bytes), {}};
    for (int fd : saved->fds) payload.fds.push_back(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
    DaemonOptions served = options;
    served.source = source_;
    PassthroughFs fresh(base::UniqueFd(::open(source_.c_str(), O_PATH | O_CLOEXEC)), served);
    return RestoreHandoverState(std::move(payload), fresh).status();
  };
  const size_t fds = OpenFdCount();
  ASSERT_TRUE(attempt(saved->bytes).ok());  // the control: the whole record restores
  for (size_t length = 0; length < saved->bytes.size(); ++length) {
    EXPECT_FALSE(attempt(saved->bytes.substr(0, length)).ok()) << "cut at " << length;
  }
  EXPECT_FALSE(attempt(saved->bytes + "x").ok());
  for (size_t at = 0; at < saved->bytes.size(); ++at) {
    std::string changed = saved->bytes;
    changed[at] = static_cast<char>(changed[at] ^ 0x5a);
    (void)attempt(changed);
  }
  EXPECT_EQ(OpenFdCount(), fds);
  ::closedir(dir);
}

TEST_P(PassthroughHandover, TwentyHandoversUnderLoadFailNoCallAndLoseNoByte) {
  const DaemonOptions options = CachingNames();
  MixedLoad::Prepare(source_);
  Mount(options);
  constexpr int kClients = 4;
  MixedLoad load(mount_->root(), kClients);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  size_t fds_after_first = 0;
  for (int round = 0; round < 20; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(HandOver(options).ok()) << "round " << round;
    previous_.clear();  // the old daemon's fds go with it
    if (round == 0) fds_after_first = OpenFdCount();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  load.Finish();
  EXPECT_EQ(load.failures(), 0) << load.first_failure();
  EXPECT_EQ(load.estale(), 0);
  EXPECT_GT(load.calls(), 0);
  for (int t = 0; t < kClients; ++t) {
    EXPECT_EQ(ReadFile(Source("c" + std::to_string(t) + ".log")), load.logged()[t]) << t;
  }
  // Nothing made twice, nothing left: only the logs beside the tree.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(source_),
                          std::filesystem::directory_iterator()),
            kClients + 1);
  // No fd leaks from one handover to the next (a little slack for the clients' own).
  EXPECT_LE(OpenFdCount(), fds_after_first + kClients);
  std::vector<absl::Duration> pauses;
  for (const HandoverReport& report : pauses_) pauses.push_back(report.pause);
  std::sort(pauses.begin(), pauses.end());
  std::printf(
      "%ld client calls; clients paused %s median, %s at most, over %zu handovers; "
      "state %zu bytes, %zu fds\n",
      load.calls(), absl::FormatDuration(pauses[pauses.size() / 2]).c_str(),
      absl::FormatDuration(pauses.back()).c_str(), pauses.size(), pauses_.back().state_bytes,
      pauses_.back().state_fds);
}

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughHandover,
                         ::testing::Values(TransportKind::kThreads),
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
