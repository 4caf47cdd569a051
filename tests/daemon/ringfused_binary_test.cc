// ringfused and ringfuse-ctl as a user runs them: the command line, going to the background once
// mounted, publishing through the control socket, -d and --trace tracing (read back with
// ringfuse-trace), and SIGTERM unmounting. Restarts are ringfused_restart_test.cc's.
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_format.h"
#include "base/fd.h"
#include "daemon/control/control_socket.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/daemon/ringfused_fixture.h"
#include "tests/daemon/test_files.h"
#include "tests/daemon/test_users.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::daemon {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(RingfusedBinary, HelpAndCommandLineErrors) {
  const Outcome help = RunCommand({RINGFUSED_BINARY, "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.output, HasSubstr("--revisions REPO MOUNTPOINT"));
  const Outcome unknown = RunCommand({RINGFUSED_BINARY, "--frobnicate", "/a", "/b"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.output, HasSubstr("unknown option --frobnicate"));
  const Outcome missing = RunCommand({RINGFUSED_BINARY, dir_.path() + "/absent", mountpoint_});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.output, HasSubstr(dir_.path() + "/absent"));
  const Outcome ctl = RunCommand({RINGFUSE_CTL_BINARY, "publish"});
  EXPECT_EQ(ctl.exit_code, 2);
  EXPECT_THAT(ctl.output, HasSubstr("usage: ringfuse-ctl publish MOUNTPOINT REV"));
}

TEST_F(RingfusedBinary, DetachesOnceMountedThenPublishesAndStopsOnSigterm) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const Outcome started =
      RunCommand({RINGFUSED_BINARY, "--revisions", repo_, mountpoint_, "--revision=r1"});
  ASSERT_EQ(started.exit_code, 0) << started.output;
  EXPECT_TRUE(IsMounted(mountpoint_)) << "the command returned before the mount was ready";
  EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "one\n");

  const Outcome status = RunCommand({RINGFUSE_CTL_BINARY, "status", mountpoint_});
  ASSERT_EQ(status.exit_code, 0) << status.output;
  EXPECT_THAT(status.output, HasSubstr("serves revision r1"));
  std::istringstream(status.output.substr(status.output.find("pid ") + 4)) >> daemon_pid_;
  ASSERT_GT(daemon_pid_, 0) << status.output;

  const Outcome published =
      RunCommand({RINGFUSE_CTL_BINARY, "publish", mountpoint_, "r2", "--invalidate=entries"});
  ASSERT_EQ(published.exit_code, 0) << published.output;
  EXPECT_THAT(published.output, HasSubstr("published r2: invalidation by entries took"));
  EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "two, longer\n");
  EXPECT_EQ(ReadFile(mountpoint_ + "/sub/same"), "shared\n");

  const Outcome epoch = RunCommand({RINGFUSE_CTL_BINARY, "publish", mountpoint_, "r1"});
  ASSERT_EQ(epoch.exit_code, 0) << epoch.output;
  EXPECT_THAT(epoch.output, HasSubstr("by epoch took"));
  EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "one\n");

  const Outcome missing = RunCommand({RINGFUSE_CTL_BINARY, "publish", mountpoint_, "r3"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.output, HasSubstr("no revision \"r3\""));
  const Outcome bad_method =
      RunCommand({RINGFUSE_CTL_BINARY, "publish", mountpoint_, "r2", "--invalidate=all"});
  EXPECT_EQ(bad_method.exit_code, 1);
  EXPECT_THAT(bad_method.output, HasSubstr("unknown invalidation \"all\""));
  EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "one\n") << "a refused publish changed the tree";

  ASSERT_EQ(::kill(daemon_pid_, SIGTERM), 0);
  EXPECT_TRUE(WaitUntilUnmounted(std::chrono::seconds(5)));
  EXPECT_TRUE(WaitUntilGone(daemon_pid_, std::chrono::seconds(5)));
  daemon_pid_ = -1;
}

TEST_F(RingfusedBinary, ABackgroundStartThatCannotMountSaysWhy) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const Outcome started =
      RunCommand({RINGFUSED_BINARY, "--revisions", repo_, mountpoint_, "--revision=r9"});
  EXPECT_EQ(started.exit_code, 1);
  EXPECT_THAT(started.output, HasSubstr("no revision \"r9\""));
  EXPECT_EQ(started.output.find("no revision"), started.output.rfind("no revision"))
      << "said twice: " << started.output;
  EXPECT_FALSE(IsMounted(mountpoint_));
}

TEST_F(RingfusedBinary, ControlIsRefusedWhereNoDaemonServes) {
  const Outcome status = RunCommand({RINGFUSE_CTL_BINARY, "status", mountpoint_});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_THAT(status.output, HasSubstr("nothing is mounted on " + mountpoint_));
}

// -d: each request and its reply on a line of their own, in the foreground; SIGINT ends it.
TEST_F(RingfusedBinary, DebugTracesRequestsAndReplies) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const std::string log = dir_.path() + "/trace";
  StartInForeground({"-d", repo_ + "/r1", mountpoint_}, log);
  const pid_t pid = daemon_pid_;
  EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "one\n");
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  const int status = WaitBounded(pid, std::chrono::seconds(10));
  daemon_pid_ = -1;
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_FALSE(IsMounted(mountpoint_));
  const std::string trace = ReadFile(log);
  EXPECT_THAT(trace, HasSubstr("INIT unique="));
  EXPECT_THAT(trace, HasSubstr("LOOKUP unique="));
  EXPECT_THAT(trace, HasSubstr("name=\"version\""));
  EXPECT_THAT(trace, HasSubstr("  reply unique="));
}

// The events of a --trace file, each line parsed (a line that is not JSON fails the test).
std::vector<nlohmann::json> TraceEvents(const std::string& path) {
  std::vector<nlohmann::json> events;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    events.push_back(nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false));
    EXPECT_FALSE(events.back().is_discarded()) << line;
  }
  return events;
}

// The first request of opcode `op` this process made (matching `name` if given), and its reply.
std::pair<nlohmann::json, nlohmann::json> RequestAndReply(const std::vector<nlohmann::json>& events,
                                                          const std::string& op,
                                                          const std::string& name = "") {
  for (const nlohmann::json& request : events) {
    if (request["ev"] != "request" || request["op"] != op || request["pid"] != ::getpid() ||
        (!name.empty() && request.value("name", "") != name)) {
      continue;
    }
    for (const nlohmann::json& reply : events) {
      if (reply["ev"] == "reply" && reply["unique"] == request["unique"]) return {request, reply};
    }
    return {request, {}};
  }
  return {};
}

// The shipped binary carries no test hook: with one armed in its environment a LOOKUP is
// answered (ringfused-hooked, which the hook tests run, holds it: their own negative control),
// and not even the variables' names are in the file.
TEST_F(RingfusedBinary, TheShippedBinaryHasNoTestHooks) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  EXPECT_FALSE(FileContains(RINGFUSED_BINARY, "RINGFUSED_TEST_"));
  EXPECT_TRUE(FileContains(RINGFUSED_HOOKED_BINARY, "RINGFUSED_TEST_"))
      << "the check above would prove nothing";
  ::setenv("RINGFUSED_TEST_HANG_ON_LOOKUP", "version", 1);
  StartInForeground({"-f", repo_ + "/r1", mountpoint_}, dir_.path() + "/stderr");
  ::unsetenv("RINGFUSED_TEST_HANG_ON_LOOKUP");
  auto looked_up = std::async(std::launch::async, [path = mountpoint_ + "/version"] {
    struct stat attr {};
    return ::stat(path.c_str(), &attr) == 0 ? 0 : errno;
  });
  const bool answered = looked_up.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  if (!answered) ::kill(daemon_pid_, SIGKILL);  // ends the connection, and so the held stat
  ASSERT_TRUE(answered) << "the shipped binary held the LOOKUP its environment named";
  EXPECT_EQ(looked_up.get(), 0);
}

// --trace naming a link another user planted in a directory anyone can write: a root daemon
// that followed it truncated and filled the file it led to. Now it refuses to start, says why,
// and the file keeps its bytes.
TEST_F(RingfusedBinary, ATraceFileThatIsASymlinkIsRefusedAndWhatItLeadsToKept) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const std::string victim = dir_.path() + "/victim";
  std::ofstream(victim) << "precious\n";
  const std::string planted = dir_.path() + "/trace.jsonl";
  ASSERT_EQ(::symlink(victim.c_str(), planted.c_str()), 0);
  const Outcome refused =
      RunCommand({RINGFUSED_BINARY, "-f", "--trace=" + planted, repo_ + "/r1", mountpoint_});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.output, HasSubstr("trace file " + planted));
  EXPECT_EQ(ReadFile(victim), "precious\n");
  EXPECT_FALSE(IsMounted(mountpoint_));
}

// --trace=FILE: the requests this test makes, their fields, results and latencies, as JSON lines
// that ringfuse-trace summarizes; a damaged line is skipped by number, the rest still counted.
TEST_F(RingfusedBinary, TracesRequestsAsJsonLinesThatTheSummaryReads) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const std::string trace = dir_.path() + "/trace.jsonl";
  StartInForeground({"-f", "--trace=" + trace, repo_ + "/r1", mountpoint_},
                    dir_.path() + "/stderr");
  struct stat st {};
  EXPECT_EQ(::stat((mountpoint_ + "/version").c_str(), &st), 0);
  EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "one\n");
  EXPECT_EQ(::stat((mountpoint_ + "/absent").c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
  ASSERT_EQ(::kill(daemon_pid_, SIGINT), 0);
  const int status = WaitBounded(daemon_pid_, std::chrono::seconds(10));
  daemon_pid_ = -1;
  ASSERT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  const std::vector<nlohmann::json> events = TraceEvents(trace);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0]["op"], "INIT");
  const auto [lookup, found] = RequestAndReply(events, "LOOKUP", "version");
  ASSERT_FALSE(lookup.is_null()) << "no LOOKUP of version by this process";
  EXPECT_EQ(lookup["nodeid"], 1);
  EXPECT_EQ(lookup["uid"], ::getuid());
  EXPECT_EQ(found["error"], 0);
  EXPECT_GT(found["latency_ns"].get<uint64_t>(), 0u);
  const auto [miss, missing] = RequestAndReply(events, "LOOKUP", "absent");
  ASSERT_FALSE(miss.is_null()) << "no LOOKUP of absent";
  EXPECT_EQ(missing["error"], -ENOENT);
  EXPECT_EQ(missing["errno"], "ENOENT");
  const auto [open, opened] = RequestAndReply(events, "OPEN");
  EXPECT_EQ(open["flags"].get<int>() & O_ACCMODE, O_RDONLY);
  EXPECT_EQ(opened["error"], 0);
  const auto [read, data] = RequestAndReply(events, "READ");
  EXPECT_EQ(read["offset"], 0);
  EXPECT_EQ(data["size"], 4) << "one\\n";

  const Outcome summary = RunCommand({RINGFUSE_TRACE_BINARY, "summary", trace});
  EXPECT_EQ(summary.exit_code, 0);
  EXPECT_THAT(summary.output, ::testing::ContainsRegex("LOOKUP +[0-9]+ +[0-9]+ +[1-9]"));
  EXPECT_THAT(summary.output, HasSubstr("\nREAD "));
  EXPECT_THAT(summary.output, HasSubstr("lines skipped 0"));
  std::ofstream(trace, std::ios::app) << "{\"t\":1,\"ev\":\"reply\",\"op\n";
  const Outcome damaged = RunCommand({RINGFUSE_TRACE_BINARY, "summary", trace});
  EXPECT_EQ(damaged.exit_code, 0);
  EXPECT_THAT(damaged.output,
              HasSubstr("line " + std::to_string(events.size() + 1) + ": not a JSON object"));
  EXPECT_THAT(damaged.output, HasSubstr("\nREAD "));
  EXPECT_THAT(damaged.output, HasSubstr("lines skipped 1"));
}

// What /proc/<pid>/limits says of a process's open files: {soft, hard}.
std::pair<long, long> FdLimitsOf(pid_t pid) {
  std::ifstream limits("/proc/" + std::to_string(pid) + "/limits");
  for (std::string line; std::getline(limits, line);) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream fields(line.substr(std::strlen("Max open files")));
    long soft = -1, hard = -1;
    fields >> soft >> hard;
    return {soft, hard};
  }
  return {-1, -1};
}

void MakeEmptyFiles(const std::string& directory, int files) {
  std::filesystem::create_directories(directory);
  for (int i = 0; i < files; ++i) {
    ASSERT_TRUE(base::UniqueFd(::open((directory + "/" + std::to_string(i)).c_str(),
                                      O_CREAT | O_WRONLY | O_CLOEXEC, 0644))
                    .valid());
  }
}

// ringfused in the foreground, as a service manager starts it: with the fd limits given.
class RingfusedUnderFdLimit : public RingfusedBinary {
 protected:
  // Root's ringfused with allow_other at 1,024 fds, serving `files` empty files that every user
  // may open, and `locked`, root's open of file 0 for lock owners to share.
  void ServeFilesToLock(int files, base::UniqueFd& locked) {
    const std::string source = dir_.path() + "/many";
    MakeEmptyFiles(source, files);
    ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);  // other users reach the mountpoint
    ASSERT_EQ(::chmod((source + "/0").c_str(), 0666), 0);
    ASSERT_EQ(::chmod((source + "/1").c_str(), 0666), 0);
    StartInForeground({"-f", "-o", "allow_other", source, mountpoint_}, dir_.path() + "/stderr",
                      {.fd_limit = rlimit{1024, 1024}});
    locked.reset(::open((mountpoint_ + "/0").c_str(), O_RDWR | O_CLOEXEC));
    ASSERT_TRUE(locked.valid()) << std::strerror(errno);
  }

  void Start(rlim_t soft, rlim_t hard, const std::string& source) {
    StartInForeground({"-f", source, mountpoint_}, dir_.path() + "/stderr",
                      {.fd_limit = rlimit{soft, hard}});
  }

  // ringfused as nobody at 256 fds, serving `files` empty files in `home`, with `options`.
  void StartUsersDaemon(const UserHome& home, int files, std::vector<std::string> options) {
    MakeEmptyFiles(home.source, files);
    ASSERT_NO_FATAL_FAILURE(GiveHomeTo(home, kNobody));
    mountpoint_ = home.mountpoint;
    options.insert(options.begin(), "-f");
    options.insert(options.end(), {home.source, home.mountpoint});
    StartInForeground(options, dir_.path() + "/stderr",
                      {.fd_limit = rlimit{256, 256}, .user = kNobody, .binary = home.binary});
  }

  void Stop() {
    ASSERT_EQ(::kill(daemon_pid_, SIGTERM), 0);
    const int status = WaitBounded(daemon_pid_, std::chrono::seconds(10));
    daemon_pid_ = -1;
    EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << status << "; the daemon said: " << ReadFile(dir_.path() + "/stderr");
    EXPECT_FALSE(IsMounted(mountpoint_));
  }
};

TEST_F(RingfusedUnderFdLimit, RaisesItsSoftLimitToTheHardOne) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  Start(256, 4096, repo_ + "/r1");
  EXPECT_EQ(FdLimitsOf(daemon_pid_), std::pair(4096L, 4096L));
  Stop();
}

// The kernel remembers every inode a walk touched; the daemon may hold 256 fds in all. A daemon
// holding one fd per remembered node failed most of this walk with EMFILE.
// Stats every one of `files` names in `directory` and reads 1,000 of them; returns how many
// calls failed, and the most fds `daemon` held meanwhile in `most_fds`.
int StatAllAndOpenSome(const std::string& directory, int files, pid_t daemon, size_t& most_fds) {
  constexpr int kOpens = 1000;
  const base::UniqueFd dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return files + kOpens;
  int failures = 0;
  for (int i = 0; i < files; ++i) {
    struct stat st {};
    if (::fstatat(dir.get(), std::to_string(i).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      ++failures;
    }
    if (i % 1000 == 0) most_fds = std::max(most_fds, ringfuse::testing::OpenFdCount(daemon));
  }
  for (int i = 0; i < kOpens; ++i) {
    const base::UniqueFd file(
        ::openat(dir.get(), std::to_string(i * 7).c_str(), O_RDWR | O_CLOEXEC));
    char byte;
    if (!file.valid() || ::read(file.get(), &byte, 1) != 0) ++failures;
  }
  most_fds = std::max(most_fds, ringfuse::testing::OpenFdCount(daemon));
  return failures;
}

constexpr int kManyFiles = 20000;
// A quarter of the limit for nodes, the rest for open files and the transport.
constexpr size_t kMostFdsAt256 = 200;

TEST_F(RingfusedUnderFdLimit, ServesTwentyThousandFilesWithinTwoHundredFiftySixFds) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const std::string source = dir_.path() + "/many";
  MakeEmptyFiles(source, kManyFiles);
  Start(256, 256, source);
  ASSERT_EQ(FdLimitsOf(daemon_pid_), std::pair(256L, 256L)) << "the limit under test is not set";
  size_t most_fds = 0;
  EXPECT_EQ(StatAllAndOpenSome(mountpoint_, kManyFiles, daemon_pid_, most_fds), 0);
  EXPECT_LT(most_fds, kMostFdsAt256);
  Stop();
}

// Nodes take most of the fds (at 2048, 1024 of them), so that a walk of more files than a
// quarter of the limit does not reopen every node; a client that then holds more files open than
// the fds left must get them from the nodes (fd_room.h). Without that, the 1,007th open failed
// with EMFILE.
int HoldOpen(const std::string& directory, int files, std::vector<base::UniqueFd>& held) {
  for (int i = 0; i < files; ++i) {
    held.emplace_back(::open((directory + "/" + std::to_string(i)).c_str(), O_RDONLY | O_CLOEXEC));
    if (!held.back().valid()) return -1;
  }
  return 0;
}

TEST_F(RingfusedUnderFdLimit, ClientsHoldingManyFilesGetFdsTheNodesHeld) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  constexpr int kWalked = 2000, kHeld = 1100;
  const std::string source = dir_.path() + "/many";
  MakeEmptyFiles(source, kWalked);
  Start(2048, 2048, source);
  ASSERT_EQ(FdLimitsOf(daemon_pid_), std::pair(2048L, 2048L)) << "the limit under test is not set";
  for (int i = 0; i < kWalked; ++i) {
    struct stat st {};
    ASSERT_EQ(::stat((mountpoint_ + "/" + std::to_string(i)).c_str(), &st), 0) << i;
  }
  ASSERT_GT(ringfuse::testing::OpenFdCount(daemon_pid_), size_t{1000})
      << "the nodes did not fill their budget: nothing would be tested";
  const ringfuse::testing::FdLimitGuard room_for_the_client(4 * kHeld);
  std::vector<base::UniqueFd> held;
  EXPECT_EQ(HoldOpen(mountpoint_, kHeld, held), 0)
      << "open " << held.size() << " failed: " << std::strerror(errno);
  EXPECT_LE(ringfuse::testing::OpenFdCount(daemon_pid_), size_t{2048});
  held.clear();
  Stop();
}

// A local user's lock owners, made by forking, against a root daemon at the default fd limit:
// each of 2,000 children of one user asks F_GETLK and takes a write lock on its own byte of one
// open file, and waits. Each owner's open used to be an fd (a question too), so the daemon ran
// out of fds and every user's LOOKUP and OPEN failed with EMFILE. Now a question makes no fd,
// locks are bounded per user (ENOLCK beyond), and another user still opens, locks and walks.
struct LockAttempt {
  int asked;  // F_GETLK's errno
  int taken;  // F_SETLK's errno
};

// In a lock owner's child: asks F_GETLK about byte `byte` of `fd` and takes a write lock on it,
// writes both errnos to `report`, and waits for SIGKILL.
[[noreturn]] void AskLockReportAndWait(int fd, int byte, int report) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = byte;
  lock.l_len = 1;
  struct flock question = lock;
  LockAttempt attempt{::fcntl(fd, F_GETLK, &question) == 0 ? 0 : errno, 0};
  attempt.taken = ::fcntl(fd, F_SETLK, &lock) == 0 ? 0 : errno;
  if (::write(report, &attempt, sizeof(attempt)) != sizeof(attempt)) ::_exit(1);
  ::close(report);  // so that the reader sees the end once no unreported owner is left
  ::pause();
  ::_exit(0);
}

// What the lock owners reported, read from `reports` until `owners` came or it ends.
struct LockTally {
  int reported = 0, asked = 0, taken = 0, refused = 0;
};
LockTally ReadLockReports(int reports, int owners) {
  LockTally tally;
  LockAttempt attempt{};
  while (tally.reported < owners && ::read(reports, &attempt, sizeof(attempt)) == sizeof(attempt)) {
    ++tally.reported;
    tally.asked += attempt.asked == 0;
    tally.taken += attempt.taken == 0;
    tally.refused += attempt.taken == ENOLCK;
  }
  return tally;
}

// Children of `user`, each asking about and locking byte i of `fd`, then waiting for SIGKILL.
std::vector<pid_t> ForkLockOwners(const User& user, int fd, int children, int report) {
  std::vector<pid_t> pids;
  for (int i = 0; i < children; ++i) {
    const pid_t pid = ::fork();
    if (pid != 0) {
      if (pid > 0) pids.push_back(pid);
      continue;
    }
    if (::setgroups(0, nullptr) != 0 || ::setgid(user.gid) != 0 || ::setuid(user.uid) != 0) {
      ::_exit(1);
    }
    AskLockReportAndWait(fd, i, report);
  }
  return pids;
}

TEST_F(RingfusedUnderFdLimit, OneUsersManyLockOwnersLeaveOtherUsersServed) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  constexpr int kOwners = 2000, kFiles = 200;
  constexpr size_t kPerUser = 1024 / 8 / 4;  // OwnerLocks::DefaultLimits at 1024 fds
  const User attacker{4242, 4242, {}}, other{4343, 4343, {}};
  base::UniqueFd locked;
  ASSERT_NO_FATAL_FAILURE(ServeFilesToLock(kFiles, locked));
  const size_t fds_before = ringfuse::testing::OpenFdCount(daemon_pid_);
  int report[2];
  ASSERT_EQ(::pipe2(report, O_CLOEXEC), 0);
  const base::UniqueFd reports(report[0]);
  base::UniqueFd writer(report[1]);
  std::vector<pid_t> owners = ForkLockOwners(attacker, locked.get(), kOwners, writer.get());
  writer.reset();  // a child that dies unreported ends the reads below instead of hanging them
  const auto end_owners = absl::MakeCleanup([&] {
    for (const pid_t pid : owners) ::kill(pid, SIGKILL);
    for (const pid_t pid : owners) ::waitpid(pid, nullptr, 0);
  });
  ASSERT_EQ(owners.size(), size_t{kOwners});
  const LockTally tally = ReadLockReports(reports.get(), kOwners);
  ASSERT_EQ(tally.reported, kOwners) << "a lock owner died unreported";
  EXPECT_EQ(tally.asked, kOwners) << "every question is answered, and makes no fd";
  EXPECT_EQ(size_t(tally.taken), kPerUser);
  EXPECT_EQ(tally.taken + tally.refused, kOwners)
      << "a lock beyond the bound is refused with ENOLCK";
  EXPECT_LE(ringfuse::testing::OpenFdCount(daemon_pid_), fds_before + kPerUser + 4);
  EXPECT_EQ(
      As(other,
         [&] {
           const base::UniqueFd file(::open((mountpoint_ + "/1").c_str(), O_RDWR | O_CLOEXEC));
           struct flock lock {};
           lock.l_type = F_WRLCK;
           lock.l_whence = SEEK_SET;
           if (!file.valid() || ::fcntl(file.get(), F_SETLK, &lock) != 0) return -1;
           struct stat st {};
           for (int i = 0; i < kFiles; ++i) {
             if (::stat((mountpoint_ + "/" + std::to_string(i)).c_str(), &st) != 0) {
               return -1;
             }
           }
           return 0;
         }),
      0)
      << "another user was refused: " << std::strerror(errno);
}

// A rootless container's lock owners: `owner` makes a user namespace into which root maps
// `uids` subordinate uids (from kFirstSubordinate), and forks `children` there, child i as uid
// i % `uids`, each asking about and locking byte i of `fd` as ForkLockOwners' do. All are in the
// process group of the container's first process, whose pid this returns.
constexpr uid_t kFirstSubordinate = 300000;

// One write(2), as /proc/<pid>/uid_map takes it.
bool WriteInOne(const std::string& path, const std::string& text) {
  const base::UniqueFd file(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  return file.valid() && ::write(file.get(), text.data(), text.size()) == ssize_t(text.size());
}

pid_t ForkContainerOfLockOwners(uid_t owner, int fd, int children, int uids, int report) {
  int unshared[2], mapped[2];
  if (::pipe2(unshared, O_CLOEXEC) != 0 || ::pipe2(mapped, O_CLOEXEC) != 0) return -1;
  const pid_t container = ::fork();
  if (container == 0) {
    char go;
    if (::setpgid(0, 0) != 0 || ::syscall(SYS_setgroups, 0, nullptr) != 0 ||
        ::syscall(SYS_setresgid, owner, owner, owner) != 0 ||
        ::syscall(SYS_setresuid, owner, owner, owner) != 0 || ::unshare(CLONE_NEWUSER) != 0 ||
        ::write(unshared[1], "u", 1) != 1 || ::read(mapped[0], &go, 1) != 1) {
      ::_exit(1);
    }
    for (int i = 0; i < children; ++i) {
      if (::fork() != 0) continue;
      const uid_t id = static_cast<uid_t>(i % uids);
      if (::syscall(SYS_setresgid, id, id, id) != 0 || ::syscall(SYS_setresuid, id, id, id) != 0) {
        ::_exit(1);
      }
      AskLockReportAndWait(fd, i, report);
    }
    ::close(report);
    ::pause();
    ::_exit(0);
  }
  ::close(unshared[1]);
  ::close(mapped[0]);
  char ready;
  const std::string map = absl::StrFormat("0 %u %d\n", kFirstSubordinate, uids);
  const std::string proc = "/proc/" + std::to_string(container);
  const bool made = container > 0 && ::read(unshared[0], &ready, 1) == 1 &&
                    WriteInOne(proc + "/uid_map", map) && WriteInOne(proc + "/gid_map", map) &&
                    ::write(mapped[1], "m", 1) == 1;
  ::close(unshared[0]);
  ::close(mapped[1]);
  if (!made && container > 0) {
    ::kill(container, SIGKILL);
    ::waitpid(container, nullptr, 0);
    return -1;
  }
  return container;
}

// The user's many uids are one user: counted per uid, 100 uids of a container took the whole
// total (128 at 1,024 fds) and the other user's lock was refused ENOLCK; counted per user
// (accountable_user.h), the container has one user's share and the other user locks.
TEST_F(RingfusedUnderFdLimit, AContainersManyUidsHaveOneUsersShareOfLockOwners) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  constexpr int kOwners = 300, kUids = 100;
  constexpr size_t kPerUser = 1024 / 8 / 4;  // OwnerLocks::DefaultLimits at 1024 fds
  const User other{4343, 4343, {}};
  base::UniqueFd locked;
  ASSERT_NO_FATAL_FAILURE(ServeFilesToLock(2, locked));
  int report[2];
  ASSERT_EQ(::pipe2(report, O_CLOEXEC), 0);
  const base::UniqueFd reports(report[0]);
  base::UniqueFd writer(report[1]);
  const pid_t container =
      ForkContainerOfLockOwners(4242, locked.get(), kOwners, kUids, writer.get());
  writer.reset();  // a child that dies unreported ends the reads below instead of hanging them
  ASSERT_GT(container, 0) << "no user namespace with subordinate uids";
  const auto end_container = absl::MakeCleanup([&] {
    ::kill(-container, SIGKILL);
    ::waitpid(container, nullptr, 0);
  });
  const LockTally tally = ReadLockReports(reports.get(), kOwners);
  ASSERT_EQ(tally.reported, kOwners) << "a lock owner died unreported";
  EXPECT_EQ(size_t(tally.taken), kPerUser) << "one user's share, not one per uid";
  EXPECT_EQ(tally.taken + tally.refused, kOwners)
      << "a lock beyond the bound is refused with ENOLCK";
  const std::string other_file = mountpoint_ + "/1";
  EXPECT_EQ(As(other,
               [&] {
                 const base::UniqueFd file(::open(other_file.c_str(), O_RDWR | O_CLOEXEC));
                 struct flock lock {};
                 lock.l_type = F_WRLCK;
                 lock.l_whence = SEEK_SET;
                 return file.valid() && ::fcntl(file.get(), F_SETLK, &lock) == 0 ? 0 : errno;
               }),
            0)
      << "another user was refused: " << std::strerror(errno);
}

// Without CAP_DAC_READ_SEARCH (a user's own daemon) nodes cannot be reopened by handle, but by
// the names they were found by. Keeping them open until FORGET failed this walk with EMFILE, and
// asking the kernel to drop them (NOTIFY_PRUNE) still did, in 2 of 5 runs: its FORGETs came too
// late.
TEST_F(RingfusedUnderFdLimit, AUsersDaemonServesTwentyThousandFilesWithinTwoHundredFiftySixFds) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const ringfuse::testing::DevFuseModeGuard open_to_users(0666);
  ASSERT_TRUE(open_to_users.changed());
  const UserHome home = PrepareHome();
  ASSERT_NO_FATAL_FAILURE(StartUsersDaemon(home, kManyFiles, {}));
  const pid_t daemon = daemon_pid_;
  EXPECT_EQ(As(kNobody,
               [&] {
                 size_t most_fds = 0;
                 const int failures =
                     StatAllAndOpenSome(home.mountpoint, kManyFiles, daemon, most_fds);
                 errno = failures != 0 ? EMFILE : most_fds >= kMostFdsAt256 ? E2BIG : 0;
                 return errno == 0 ? 0 : -1;
               }),
            0)
      << "EMFILE: calls failed; E2BIG: the daemon held too many fds";
  Stop();
}

// The same user's daemon, its nodes closed by a walk of many others, asked for attributes by node
// (no attribute caching) after renames and removals through the mount, by fstat of files a client
// opened before (a stat by path would heal a stale node by looking its name up again): a renamed
// node is reopened by its new name, and a removed one answers as natively, with 0 links.
int RenameRemoveAndStatClosedNodes(const std::string& mnt, int files) {
  constexpr int kMoved = 300, kRemoved = 300, kHeld = 50;
  if (::mkdir((mnt + "/moved").c_str(), 0755) != 0) return -1;
  std::vector<base::UniqueFd> moved, removed;
  for (int i = 0; i < kMoved + kRemoved; ++i) {
    const std::string path = mnt + "/" + std::to_string(i);
    std::vector<base::UniqueFd>& held = i < kMoved ? moved : removed;
    if (held.size() < kHeld) held.emplace_back(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    const int changed = i < kMoved
                            ? ::rename(path.c_str(), (mnt + "/moved/" + std::to_string(i)).c_str())
                            : ::unlink(path.c_str());
    if (changed != 0) return -1;
  }
  struct stat st {};
  for (int i = kMoved + kRemoved; i < files; ++i) {  // closes every node above
    if (::stat((mnt + "/" + std::to_string(i)).c_str(), &st) != 0) return -1;
  }
  for (size_t i = 0; i < moved.size(); ++i) {
    struct stat by_name {};
    if (!moved[i].valid() || ::fstat(moved[i].get(), &st) != 0 ||
        ::stat((mnt + "/moved/" + std::to_string(i)).c_str(), &by_name) != 0) {
      return -1;
    }
    if (st.st_ino != by_name.st_ino) return errno = EXDEV, -1;
  }
  for (const base::UniqueFd& fd : removed) {
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return -1;
    if (st.st_nlink != 0) return errno = EEXIST, -1;
  }
  return 0;
}

TEST_F(RingfusedUnderFdLimit, AUsersDaemonReopensClosedNodesByTheirNamesAfterRenames) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  constexpr int kFiles = 3000;
  const ringfuse::testing::DevFuseModeGuard open_to_users(0666);
  ASSERT_TRUE(open_to_users.changed());
  const UserHome home = PrepareHome();
  ASSERT_NO_FATAL_FAILURE(StartUsersDaemon(home, kFiles, {"-o", "attr_timeout=0"}));
  EXPECT_EQ(As(kNobody, [&] { return RenameRemoveAndStatClosedNodes(home.mountpoint, kFiles); }), 0)
      << "EEXIST: a removed file still had links; EXDEV: another inode under a moved name";
  Stop();
}

// A lock wait is a request the daemon answers late; past -o request_timeout the kernel aborts the
// whole connection. The daemon must notice, say so, unmount and exit 1, and the waiting client
// must get an error rather than hang.
TEST_F(RingfusedBinary, ARequestUnansweredPastRequestTimeoutEndsWithTheKernelsAbort) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const std::string source = repo_ + "/r1";
  const std::string log = dir_.path() + "/stderr";
  StartInForeground({"-f", "-o", "request_timeout=1", source, mountpoint_}, log);
  const pid_t pid = daemon_pid_;
  const std::string file = mountpoint_ + "/version";
  const base::UniqueFd holder(::open(file.c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(holder.valid()) << std::strerror(errno);
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;
  ASSERT_EQ(::fcntl(holder.get(), F_OFD_SETLK, &whole), 0) << std::strerror(errno);
  const pid_t waiter = ::fork();
  ASSERT_GE(waiter, 0);
  if (waiter == 0) {
    const int fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
    struct flock lock = whole;
    ::_exit(::fcntl(fd, F_OFD_SETLKW, &lock) == 0 ? 0 : 1);
  }
  // The kernel looks for expired requests every 15 s or so.
  const int waited = WaitBounded(waiter, std::chrono::seconds(60));
  const int daemon = WaitBounded(pid, std::chrono::seconds(10));
  daemon_pid_ = -1;
  EXPECT_TRUE(waited >= 0 && WIFEXITED(waited) && WEXITSTATUS(waited) == 1)
      << "the waiter hung or got the lock: " << waited;
  EXPECT_TRUE(daemon >= 0 && WIFEXITED(daemon) && WEXITSTATUS(daemon) == 1) << daemon;
  EXPECT_THAT(ReadFile(log), HasSubstr("the kernel aborted the connection to " + mountpoint_));
  EXPECT_FALSE(IsMounted(mountpoint_)) << "the dead mount was left behind";
}

// ringfused as a user runs it: mounted through fusermount3, every operation made as that user
// (each failed with EPERM when the daemon insisted on acting as the caller without the rights
// to), and said at start. Other users would act with its rights: allow_other alone is refused.
// A daemon in a pid namespace of its own, as `unshare -p -f` starts it (the host's /proc, the
// mount visible): every caller arrives with pid 0, its supplementary groups unreadable. Served
// without them, a member of a group that denies (root:banned 0604, an ACL group:banned:---)
// would be "other" and read the file. Such files are refused to every caller whose groups are
// unknown (fail closed: bob too, whom natively "other" lets read), the rest served.
TEST_F(RingfusedBinary, ADaemonThatCannotReadCallersGroupsRefusesWhatAGroupCouldDeny) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
  const std::string source = dir_.path() + "/groups";
  ASSERT_EQ(::mkdir(source.c_str(), 0755), 0);
  const std::string by_mode = source + "/by-mode", by_acl = source + "/by-acl",
                    plain = source + "/plain";
  for (const std::string& path : {by_mode, by_acl, plain}) {
    WriteFile(path, "secret\n");
    ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  }
  ASSERT_EQ(::chown(by_mode.c_str(), 0, kShared), 0);
  ASSERT_EQ(::chmod(by_mode.c_str(), 0604), 0);
  const std::string acl = ringfuse::testing::AclDenyingGroup(kShared);
  if (::setxattr(by_acl.c_str(), "system.posix_acl_access", acl.data(), acl.size(), 0) != 0) {
    GTEST_SKIP() << "no ACLs under " << source << ": " << std::strerror(errno);
  }
  const auto reads = [](const User& user, const std::string& path) {
    return As(user, [&] {
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      return fd < 0 ? -1 : ::close(fd);
    });
  };
  // The control: natively alice's group takes the file from her, and bob is "other".
  EXPECT_EQ(reads(kAlice, by_mode), EACCES);
  EXPECT_EQ(reads(kAlice, by_acl), EACCES);
  EXPECT_EQ(reads(kBob, by_mode), 0);

  const std::string log = dir_.path() + "/stderr";
  StartInForeground({"-p", "-f", "--kill-child", RINGFUSED_BINARY, "-f", "-o", "allow_other",
                     source, mountpoint_},
                    log, {.binary = "/usr/bin/unshare"});
  EXPECT_THAT(ReadFile(log), HasSubstr("supplementary groups cannot be read"));
  for (const char* name : {"/by-mode", "/by-acl"}) {
    EXPECT_EQ(reads(kAlice, mountpoint_ + name), EACCES) << name;
    EXPECT_EQ(reads(kBob, mountpoint_ + name), EACCES) << name << ": failing closed";
  }
  EXPECT_EQ(reads(kAlice, mountpoint_ + "/plain"), 0);
  EXPECT_EQ(reads(kBob, mountpoint_ + "/plain"), 0);
}

TEST_F(RingfusedBinary, AUsersOwnDaemonMakesEveryOperationAsThatUser) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const ringfuse::testing::DevFuseModeGuard open_to_users(0666);
  ASSERT_TRUE(open_to_users.changed());
  const User user = kNobody;
  const UserHome prepared = PrepareHome();
  WriteFile(prepared.source + "/given", "from the source\n");
  ASSERT_NO_FATAL_FAILURE(GiveHomeTo(prepared, user));
  const std::string& home = prepared.home;
  const std::string& binary = prepared.binary;
  const std::string& mountpoint = prepared.mountpoint;
  const std::string log = dir_.path() + "/stderr";

  const pid_t refused = Spawn({"-f", "-o", "allow_other", home + "/src", mountpoint}, log,
                              {.user = user, .binary = binary});
  const int refused_status = WaitBounded(refused, std::chrono::seconds(10));
  EXPECT_TRUE(WIFEXITED(refused_status) && WEXITSTATUS(refused_status) == 1) << refused_status;
  EXPECT_THAT(ReadFile(log), HasSubstr("-o allow_other needs -o default_permissions"));

  mountpoint_ = mountpoint;  // TearDown unmounts it, whatever happens
  StartInForeground({"-f", home + "/src", mountpoint}, log, {.user = user, .binary = binary});
  EXPECT_THAT(ReadFile(log), HasSubstr("every operation is made as uid " +
                                       std::to_string(user.uid) + ", whoever the caller is"));
  const auto as_user = [&](const std::function<bool()>& step) {
    return As(user, [&] { return step() ? 0 : -1; });
  };
  EXPECT_EQ(as_user([&] { return ReadFile(mountpoint + "/given") == "from the source\n"; }), 0);
  EXPECT_EQ(as_user([&] {
              const base::UniqueFd made(
                  ::open((mountpoint + "/made").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
              return made.valid() && ::write(made.get(), "new", 3) == 3;
            }),
            0);
  EXPECT_EQ(as_user([&] { return ::mkdir((mountpoint + "/dir").c_str(), 0700) == 0; }), 0);
  EXPECT_EQ(as_user([&] {
              return ::rename((mountpoint + "/made").c_str(),
                              (mountpoint + "/dir/moved").c_str()) == 0;
            }),
            0);
  EXPECT_EQ(ReadFile(home + "/src/dir/moved"), "new");
  struct stat made {};
  ASSERT_EQ(::stat((home + "/src/dir/moved").c_str(), &made), 0);
  EXPECT_EQ(made.st_uid, user.uid);
  ASSERT_EQ(::kill(daemon_pid_, SIGTERM), 0);
  const int status = WaitBounded(daemon_pid_, std::chrono::seconds(10));
  daemon_pid_ = -1;
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(WaitUntilUnmounted(std::chrono::seconds(5)));
}

// The source and type columns of /proc/self/mounts for `path`.
std::pair<std::string, std::string> SourceAndTypeOf(const std::string& path) {
  std::ifstream mounts("/proc/self/mounts");
  std::string source, where, type, rest;
  while (mounts >> source >> where >> type && std::getline(mounts, rest)) {
    if (where == path) return {source, type};
  }
  return {};
}

// Every running process started from `binary`.
std::vector<pid_t> ProcessesOf(const std::string& binary) {
  std::vector<pid_t> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code error;
    if (std::filesystem::read_symlink(entry.path() / "exe", error) == binary) {
      found.push_back(std::stoi(name));
    }
  }
  return found;
}

// mount(8) as an administrator uses it: `mount -t fuse.ringfused` and fstab lines, through
// Debian's mount.fuse3, which runs `/bin/sh -c 'ringfused SOURCE MOUNTPOINT -o OPTIONS'`.
// mount(8) clears PATH for its helpers, so the shell's default one finds ringfused: each command
// runs in a private mount namespace where /usr/local/sbin shows a directory holding the built
// ringfused. Whatever a command leaves mounted there ends with its namespace, once TearDown has
// killed the daemons it started.
class RingfusedThroughMount : public RingfusedBinary {
 protected:
  void SetUp() override {
    RingfusedBinary::SetUp();
    source_ = repo_ + "/r1";
    const std::string bin = dir_.path() + "/bin";
    std::filesystem::create_directory(bin);
    std::filesystem::create_symlink(RINGFUSED_BINARY, bin + "/ringfused");
    bin_ = bin;
  }

  void TearDown() override {
    for (const pid_t pid : ProcessesOf(std::filesystem::canonical(RINGFUSED_BINARY))) {
      ::kill(pid, SIGKILL);
    }
    RingfusedBinary::TearDown();
  }

  // Runs `script` with sh in a private mount namespace where `ringfused` is on mount.fuse3's PATH.
  Outcome InNamespace(const std::string& script) {
    return RunCommand({"/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                       "mount --bind " + bin_ + " /usr/local/sbin && " + script});
  }

  // After `mount_command`: reads the file, shows the mount's line, unmounts with umount and shows
  // that nothing is left.
  std::string MountReadAndUnmount(const std::string& mount_command) {
    const std::string& mnt = mountpoint_;
    const Outcome outcome =
        InNamespace(mount_command + " && cat " + mnt + "/version && grep ' " + mnt +
                    " ' /proc/self/mountinfo && umount " + mnt +
                    " && echo unmounted && grep -c ' " + mnt + " ' /proc/self/mountinfo; true");
    EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
    return outcome.output;
  }

  // Whether every daemon started from the built binary has ended within `bound`.
  static bool WaitUntilGoneAll(std::chrono::milliseconds bound) {
    const auto deadline = Clock::now() + bound;
    while (!ProcessesOf(std::filesystem::canonical(RINGFUSED_BINARY)).empty()) {
      if (Clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  std::string source_, bin_;
};

// The mount's own options (fields 6) of a mountinfo line printed by a script, as one string.
std::string MountOptionsIn(const std::string& output, const std::string& mountpoint) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, where, options;
    if (fields >> id >> parent >> device >> root >> where >> options && where == mountpoint) {
      return "," + options + ",";
    }
  }
  return "";
}

TEST_F(RingfusedThroughMount, MountTypeFuseRingfusedServesWithTheFlagsAskedAndUmountEndsIt) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const std::string output =
      MountReadAndUnmount("mount -t fuse.ringfused " + source_ + " " + mountpoint_ +
                          " -o ro,nosuid,nodev,noexec,noatime,_netdev,allow_other");
  EXPECT_THAT(output, HasSubstr("one\n"));
  const std::string options = MountOptionsIn(output, mountpoint_);
  for (const char* flag : {",ro,", ",nosuid,", ",nodev,", ",noexec,", ",noatime,"}) {
    EXPECT_THAT(options, HasSubstr(flag)) << output;
  }
  EXPECT_THAT(output, HasSubstr("fuse.ringfused " + source_));
  EXPECT_THAT(output, HasSubstr("unmounted\n0\n"));
  EXPECT_TRUE(WaitUntilGoneAll(std::chrono::seconds(5))) << "the daemon outlived its umount";
}

// As root mount.fuse3 adds dev,suid unless told nodev,nosuid: the daemon does as told.
TEST_F(RingfusedThroughMount, AnFstabLineMountsWithItsOptions) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const std::string fstab = dir_.path() + "/fstab";
  WriteFile(fstab, source_ + " " + mountpoint_ +
                       " fuse.ringfused rw,nosuid,strictatime,noauto,nofail,x-note=1 0 0\n");
  const std::string output = MountReadAndUnmount("mount -T " + fstab + " " + mountpoint_);
  EXPECT_THAT(output, HasSubstr("one\n"));
  const std::string options = MountOptionsIn(output, mountpoint_);
  EXPECT_THAT(options, HasSubstr(",rw,")) << output;
  EXPECT_THAT(options, HasSubstr(",nosuid,")) << output;
  EXPECT_THAT(options, Not(HasSubstr(",nodev,"))) << "mount.fuse3 asked for dev: " << output;
  EXPECT_THAT(options, Not(HasSubstr("atime,"))) << "strictatime shows no atime flag: " << output;
  EXPECT_THAT(output, HasSubstr("unmounted\n0\n"));
  EXPECT_TRUE(WaitUntilGoneAll(std::chrono::seconds(5))) << "the daemon outlived its umount";
}

// Negative control: an option ringfused does not know fails the mount, saying which.
TEST_F(RingfusedThroughMount, AnUnknownOptionFailsTheMountByName) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const Outcome outcome = InNamespace("mount -t fuse.ringfused " + source_ + " " + mountpoint_ +
                                      " -o nosuid,frobnicate; echo status $?; grep -c ' " +
                                      mountpoint_ + " ' /proc/self/mountinfo; true");
  EXPECT_THAT(outcome.output, HasSubstr("ringfused: unknown option -o frobnicate (see --help)"));
  EXPECT_THAT(outcome.output, Not(HasSubstr("status 0")));
  EXPECT_THAT(outcome.output, HasSubstr("\n0\n")) << "something was mounted";
}

// Killed with SIGKILL, the daemon cannot unmount; with -o auto_unmount fusermount3 does.
TEST_F(RingfusedBinary, AutoUnmountLeavesNoMountBehindAKilledDaemon) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  for (const bool auto_unmount : {true, false}) {
    SCOPED_TRACE(auto_unmount ? "auto_unmount" : "without auto_unmount (control)");
    std::vector<std::string> args = {"-f", repo_ + "/r1", mountpoint_};
    if (auto_unmount) args.insert(args.end(), {"-o", "auto_unmount"});
    StartInForeground(args, dir_.path() + "/stderr");
    EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "one\n");
    ASSERT_EQ(::kill(daemon_pid_, SIGKILL), 0);
    WaitBounded(std::exchange(daemon_pid_, -1), std::chrono::seconds(5));
    EXPECT_EQ(WaitUntilUnmounted(std::chrono::seconds(1)), auto_unmount);
    if (IsMounted(mountpoint_)) ::umount2(mountpoint_.c_str(), MNT_DETACH);
  }
}

TEST_F(RingfusedBinary, FsnameAndSubtypeShowInProcMounts) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  StartInForeground({"-f", repo_ + "/r1", mountpoint_}, dir_.path() + "/stderr");
  EXPECT_EQ(SourceAndTypeOf(mountpoint_), std::pair(repo_ + "/r1", std::string("fuse.ringfused")))
      << "the defaults";
  ASSERT_EQ(::kill(daemon_pid_, SIGTERM), 0);
  WaitBounded(std::exchange(daemon_pid_, -1), std::chrono::seconds(10));
  ASSERT_TRUE(WaitUntilUnmounted(std::chrono::seconds(5)));
  StartInForeground({"-f", repo_ + "/r1", mountpoint_, "-o", "fsname=shared-data,subtype=backup"},
                    dir_.path() + "/stderr");
  EXPECT_EQ(SourceAndTypeOf(mountpoint_),
            std::pair(std::string("shared-data"), std::string("fuse.backup")));
  EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "one\n");
}

// -o sync_init: INIT is answered while mount() waits, then the mount serves as usual.
TEST_F(RingfusedBinary, SyncInitMountsAndServes) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  const std::string log = dir_.path() + "/stderr";
  StartInForeground({"-f", "-o", "sync_init", repo_ + "/r1", mountpoint_}, log);
  EXPECT_EQ(ReadFile(mountpoint_ + "/version"), "one\n") << ReadFile(log);
}

}  // namespace
}  // namespace ringfuse::daemon
