// Mount against the real kernel: each method, the mountpoint checks, unmounting, fusermount3 as
// an unprivileged user, and auto_unmount. Needs root and /dev/fuse; skips with the reason
// otherwise. Every mount lives in the test's own temporary directory, is served by a small
// thread that answers INIT, and is unmounted even when an assertion fails.
#include "transport/mount.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/dispatcher.h"
#include "ringfuse/handler.h"
#include "ringfuse/protocol/reply_channel.h"
#include "tests/transport/kernel_fixture.h"
#include "transport/dev_fuse.h"
#include "transport/log.h"

namespace ringfuse {

// Readable parameters and values in failure messages. Outside the unnamed namespace, where
// GoogleTest's argument-dependent lookup finds them; static, so that other test files of this
// executable may have their own.
static std::string MethodName(MountMethod method) {
  switch (method) {
    case MountMethod::kAuto: return "Auto";
    case MountMethod::kMountSyscall: return "MountSyscall";
    case MountMethod::kNewMountApi: return "NewMountApi";
    case MountMethod::kFusermount: return "Fusermount";
  }
  return "Unknown";
}
static void PrintTo(MountMethod method, std::ostream* out) { *out << MethodName(method); }
namespace internal {
static void PrintTo(ConnectionState state, std::ostream* out) {
  constexpr const char* kNames[] = {"AwaitingInit", "Running", "InitFailed", "Destroyed"};
  *out << kNames[static_cast<int>(state)];
}
}  // namespace internal

namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using Milliseconds = std::chrono::milliseconds;
using ringfuse::testing::DevFuseModeGuard;

constexpr auto kServerExitBound = std::chrono::seconds(10);
constexpr auto kMountGoneBound = std::chrono::seconds(10);
constexpr auto kChildBound = std::chrono::seconds(30);
constexpr const char* kFusermountPath = "/usr/bin/fusermount3";
constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;
constexpr const char* kFsname = "ringfuse-test,with-comma";
constexpr const char* kSubtype = "mounttest";

bool WaitFor(const std::function<bool()>& condition, Milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(Milliseconds(20));
  }
  return true;
}

// ---- /proc/self/mountinfo ----

struct MountEntry {
  std::string mount_point;
  std::vector<std::string> mount_options;  // the mount's own: ro, nosuid, nodev
  std::string fstype;
  std::string source;
  std::vector<std::string> super_options;  // the filesystem's: user_id=, allow_other, max_read=
  unsigned minor = 0;
};

std::vector<MountEntry> ReadMountinfo() {
  std::vector<MountEntry> entries;
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mountinfo, line)) {
    std::istringstream fields(line);
    std::string id, parent, device, root, mount_options, field, super_options;
    MountEntry entry;
    fields >> id >> parent >> device >> root >> entry.mount_point >> mount_options;
    while (fields >> field && field != "-") {  // optional fields such as shared:1
    }
    fields >> entry.fstype >> entry.source >> super_options;
    entry.mount_options = absl::StrSplit(mount_options, ',');
    entry.super_options = absl::StrSplit(super_options, ',');
    entry.minor = std::stoul(device.substr(device.find(':') + 1));
    entries.push_back(std::move(entry));
  }
  return entries;
}

// The mount on top at `mount_point`, if any.
std::optional<MountEntry> FindMount(const std::string& mount_point) {
  std::optional<MountEntry> found;
  for (MountEntry& entry : ReadMountinfo()) {
    if (entry.mount_point == mount_point) found = std::move(entry);
  }
  return found;
}

// Whatever a failed test left mounted under `directory`, deepest first.
void DetachMountsUnder(const std::string& directory) {
  std::vector<std::string> mount_points;
  for (const MountEntry& entry : ReadMountinfo()) {
    if (entry.mount_point.starts_with(directory + "/")) mount_points.push_back(entry.mount_point);
  }
  std::sort(mount_points.rbegin(), mount_points.rend());
  for (const std::string& mount_point : mount_points) umount2(mount_point.c_str(), MNT_DETACH);
}

// ---- A server that answers INIT (and ENOSYS to the rest) ----

// Each reply as fuse_out_header + body in one writev, as /dev/fuse takes it.
class WritevReplyChannel : public ReplyChannel {
 public:
  explicit WritevReplyChannel(int fd) : fd_(fd) {}

  void SendReply(const ReplyTarget& target, int32_t error,
                 std::span<const ConstBytes> body) override {
    wire::OutHeader header{sizeof(wire::OutHeader), error, target.unique};
    std::vector<iovec> parts = {{&header, sizeof(header)}};
    for (const ConstBytes part : body) {
      parts.push_back({const_cast<std::byte*>(part.data()), part.size()});
      header.len += part.size();
    }
    // A failed write means the kernel stopped waiting; the next read says why.
    (void)writev(fd_, parts.data(), static_cast<int>(parts.size()));
  }

 private:
  int fd_;
};

// Without SA_RESTART, so that a signal ends a read() blocked on /dev/fuse with EINTR.
void InstallInterruptHandler() {
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_handler = [](int) {};
    sigemptyset(&action.sa_mask);
    return sigaction(SIGUSR1, &action, nullptr) == 0;
  }();
  (void)installed;
}

// Reads requests and dispatches them until a read fails: ENODEV once the mount is gone.
class InitServer {
 public:
  // Serves its own duplicate of `dev_fd`, which stays valid however the Mount closes its fd.
  explicit InitServer(int dev_fd) : fd_(fcntl(dev_fd, F_DUPFD_CLOEXEC, 0)), channel_(fd_.get()) {
    InstallInterruptHandler();
    thread_ = std::thread([this] { Serve(); });
  }
  InitServer(const InitServer&) = delete;
  InitServer& operator=(const InitServer&) = delete;
  // Bounded: a loop still running after kServerExitBound is interrupted.
  ~InitServer() {
    if (!WaitForExit(kServerExitBound)) pthread_kill(thread_.native_handle(), SIGUSR1);
    thread_.join();
  }

  internal::ConnectionState state() const { return dispatcher_.state(); }

  // The errno that ended the loop, or nothing while it still runs after `bound`.
  std::optional<int> WaitForExit(Milliseconds bound) const {
    if (exited_.wait_for(bound) != std::future_status::ready) return std::nullopt;
    return exited_.get();
  }

 private:
  void Serve() {
    // The kernel refuses reads smaller than a whole request of max_write bytes.
    std::vector<std::byte> buffer(InitWishes{}.max_write + 4096);
    for (;;) {
      const ssize_t length = read(fd_.get(), buffer.data(), buffer.size());
      if (length <= 0) {
        exit_.set_value(length < 0 ? errno : 0);
        return;
      }
      dispatcher_.Dispatch(ConstBytes(buffer.data(), static_cast<size_t>(length)),
                           internal::Delivery{});
    }
  }

  base::UniqueFd fd_;
  Handler handler_;
  WritevReplyChannel channel_;
  internal::LoggingDiagnostics diagnostics_;
  internal::Dispatcher dispatcher_{handler_, channel_, diagnostics_, InitWishes{}};
  std::promise<int> exit_;
  std::shared_future<int> exited_ = exit_.get_future().share();
  std::thread thread_;
};

// Members go in reverse order: the mount first, which ends the server's loop.
struct ServedMount {
  std::unique_ptr<InitServer> server;
  absl::StatusOr<internal::Mount> mount;
};

// With sync_init the server must run before mount() (which waits for INIT); otherwise a read
// before the mount fails, so it starts after.
ServedMount MountAndServe(const MountOptions& options) {
  ServedMount served;
  const auto start_server = [&served](int fd) { served.server = std::make_unique<InitServer>(fd); };
  served.mount = options.sync_init ? internal::Mount::Create(options, start_server)
                                   : internal::Mount::Create(options);
  if (served.mount.ok() && served.server == nullptr) start_server(served.mount->dev_fd());
  return served;
}

MountOptions OptionsFor(const std::string& mountpoint, MountMethod method) {
  MountOptions options;
  options.mountpoint = mountpoint;
  options.method = method;
  options.fsname = kFsname;
  options.subtype = kSubtype;
  return options;
}

// ---- Child processes, for other users, other mount namespaces, and a daemon to kill ----

// One "key=value" line on the report pipe.
void Report(int fd, const std::string& key, const std::string& value) {
  const std::string line = key + "=" + value + "\n";
  (void)write(fd, line.data(), line.size());
}

void ReportStatus(int fd, const std::string& key, const absl::Status& status) {
  Report(fd, key + "_code", absl::StatusCodeToString(status.code()));
  Report(fd, key + "_message", std::string(status.message()));
}

// A forked child that runs a body, reports over a pipe and exits; killed by SIGALRM after
// `bound`, and by SIGKILL if still alive when this is destroyed.
class Child {
 public:
  Child(const std::function<void(int report_fd)>& body, std::chrono::seconds bound) {
    int ends[2];
    // Close-on-exec: a fusermount3 the child starts must not keep the pipe open.
    if (pipe2(ends, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ < 0) {
      close(ends[0]);
      close(ends[1]);
      return;
    }
    if (pid_ == 0) {
      close(ends[0]);
      alarm(static_cast<unsigned>(bound.count()));
      body(ends[1]);
      _exit(0);
    }
    close(ends[1]);
    reports_ = ends[0];
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    Kill();
    if (reports_ >= 0) close(reports_);
  }

  bool started() const { return pid_ > 0; }

  // Lines until EOF, until a line with `until_key` arrives, or until `bound` passes.
  std::map<std::string, std::string> ReadReport(Milliseconds bound, const std::string& until_key) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<Milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd readable{reports_, POLLIN, 0};
      if (left.count() <= 0 || poll(&readable, 1, static_cast<int>(left.count())) <= 0) break;
      char chunk[4096];
      const ssize_t length = read(reports_, chunk, sizeof(chunk));
      if (length <= 0) break;
      pending_.append(chunk, static_cast<size_t>(length));
      if (TakeLines(until_key)) break;
    }
    return report_;
  }

  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(std::exchange(pid_, -1), nullptr, 0);
  }

 private:
  // Moves whole lines into report_; true once `until_key` was among them.
  bool TakeLines(const std::string& until_key) {
    bool seen = false;
    size_t end;
    while ((end = pending_.find('\n')) != std::string::npos) {
      const std::string line = pending_.substr(0, end);
      pending_.erase(0, end + 1);
      const size_t equals = line.find('=');
      const std::string key = line.substr(0, equals);
      report_[key] = equals == std::string::npos ? "" : line.substr(equals + 1);
      seen = seen || key == until_key;
    }
    return seen;
  }

  pid_t pid_ = -1;
  int reports_ = -1;
  std::string pending_;
  std::map<std::string, std::string> report_;
};

// In a new mount namespace (the child's alone), covers `directory` with an empty tmpfs.
bool HideUnderTmpfs(const char* directory) {
  return unshare(CLONE_NEWNS) == 0 &&
         mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
         mount("tmpfs", directory, "tmpfs", 0, nullptr) == 0;
}

// For good: a process cannot take its privileges back.
bool BecomeNobody() {
  return setgroups(0, nullptr) == 0 && setgid(kNogroup) == 0 && setuid(kNobody) == 0;
}

// Create's status, from a child that first runs `prepare` (false, with errno set, if it cannot).
std::map<std::string, std::string> CreateInChild(const std::function<bool()>& prepare,
                                                 const MountOptions& options) {
  Child child(
      [&](int report) {
        if (!prepare()) return Report(report, "error", std::strerror(errno));
        ReportStatus(report, "create", internal::Mount::Create(options).status());
      },
      kChildBound);
  if (!child.started()) return {{"error", "cannot fork"}};
  return child.ReadReport(kChildBound, "create_message");
}

// ---- Fixtures ----

std::string MethodParamName(const ::testing::TestParamInfo<MountMethod>& method) {
  return MethodName(method.param);
}

class MountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: these tests mount FUSE filesystems";
    if (access(internal::kDevFusePath, F_OK) != 0) {
      GTEST_SKIP() << internal::kDevFusePath << " is missing: load the fuse module (modprobe fuse)";
    }
    std::string pattern = std::filesystem::temp_directory_path() / "ringfuse-mount-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    root_ = std::filesystem::canonical(pattern);
  }

  void TearDown() override {
    if (root_.empty()) return;
    DetachMountsUnder(root_);
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }

  std::string NewDirectory(const std::string& name) {
    const std::string path = root_ + "/" + name;
    EXPECT_EQ(mkdir(path.c_str(), 0755), 0) << path << ": " << std::strerror(errno);
    return path;
  }

  // A directory that nobody owns and can reach.
  std::string NewDirectoryOfNobody(const std::string& name) {
    EXPECT_EQ(chmod(root_.c_str(), 0755), 0) << std::strerror(errno);
    const std::string path = NewDirectory(name);
    EXPECT_EQ(chown(path.c_str(), kNobody, kNogroup), 0) << std::strerror(errno);
    return path;
  }

  void SkipWithoutFusermount() {
    if (access(kFusermountPath, X_OK) != 0) {
      GTEST_SKIP() << kFusermountPath << " is missing: apt-get install fuse3";
    }
  }

  std::string root_;
};

class MountMethodTest : public MountTest, public ::testing::WithParamInterface<MountMethod> {
 protected:
  void SetUp() override {
    MountTest::SetUp();
    if (!IsSkipped() && GetParam() == MountMethod::kFusermount) SkipWithoutFusermount();
  }

  // The mount must be gone, and its server told so (ENODEV).
  void MountUnmountAndCheck(bool lazy) {
    ServedMount served = MountAndServe(OptionsFor(NewDirectory("mnt"), GetParam()));
    ASSERT_TRUE(served.mount.ok()) << served.mount.status();
    const std::string mountpoint = served.mount->mountpoint();

    ASSERT_TRUE(served.mount->Unmount(lazy).ok());
    EXPECT_FALSE(served.mount->mounted());
    EXPECT_FALSE(FindMount(mountpoint).has_value());
    EXPECT_EQ(served.server->WaitForExit(kServerExitBound), ENODEV);
  }
};

INSTANTIATE_TEST_SUITE_P(EveryMethod, MountMethodTest,
                         ::testing::Values(MountMethod::kMountSyscall, MountMethod::kNewMountApi,
                                           MountMethod::kFusermount),
                         MethodParamName);

class KernelMountTest : public MountTest, public ::testing::WithParamInterface<MountMethod> {};

INSTANTIATE_TEST_SUITE_P(KernelMethods, KernelMountTest,
                         ::testing::Values(MountMethod::kMountSyscall, MountMethod::kNewMountApi),
                         MethodParamName);

// ---- Each method ----

TEST_P(MountMethodTest, AppearsInMountinfoWithTypeSourceAndOptions) {
  MountOptions options = OptionsFor(NewDirectory("mnt"), GetParam());
  options.allow_other = true;
  options.default_permissions = true;
  options.read_only = true;
  options.max_read = 65536;
  ServedMount served = MountAndServe(options);
  ASSERT_TRUE(served.mount.ok()) << served.mount.status();
  const internal::Mount& mount = *served.mount;
  EXPECT_EQ(mount.method(), GetParam());
  EXPECT_TRUE(mount.mounted());

  const std::optional<MountEntry> entry = FindMount(mount.mountpoint());
  ASSERT_TRUE(entry.has_value()) << mount.mountpoint() << " is not in /proc/self/mountinfo";
  EXPECT_EQ(entry->fstype, "fuse.mounttest");
  EXPECT_EQ(entry->source, kFsname);
  EXPECT_THAT(entry->mount_options, AllOf(Contains("ro"), Contains("nosuid"), Contains("nodev")));
  EXPECT_THAT(entry->super_options,
              AllOf(Contains("allow_other"), Contains("default_permissions"),
                    Contains("max_read=65536"), Contains("user_id=0"), Contains("group_id=0")));
  EXPECT_EQ(entry->minor, mount.connection_id());
  EXPECT_TRUE(WaitFor([&] { return served.server->state() == internal::ConnectionState::kRunning; },
                      kServerExitBound));
}

// mount(8)'s generic flags reach the mount: noexec and noatime, and nosuid and nodev lifted (as
// root). Negative control: the defaults show nosuid,nodev and neither of the others.
TEST_P(MountMethodTest, GenericFlagsReachTheMount) {
  ServedMount plain = MountAndServe(OptionsFor(NewDirectory("plain"), GetParam()));
  ASSERT_TRUE(plain.mount.ok()) << plain.mount.status();
  const std::optional<MountEntry> defaults = FindMount(plain.mount->mountpoint());
  ASSERT_TRUE(defaults.has_value());
  EXPECT_THAT(defaults->mount_options,
              AllOf(Contains("nosuid"), Contains("nodev"), Contains("relatime"),
                    Not(Contains("noexec")), Not(Contains("noatime"))));

  MountOptions options = OptionsFor(NewDirectory("mnt"), GetParam());
  options.flags.nosuid = false;
  options.flags.nodev = false;
  options.flags.noexec = true;
  options.flags.atime = AtimeUpdate::kNever;
  ServedMount served = MountAndServe(options);
  ASSERT_TRUE(served.mount.ok()) << served.mount.status();
  const std::optional<MountEntry> entry = FindMount(served.mount->mountpoint());
  ASSERT_TRUE(entry.has_value());
  EXPECT_THAT(entry->mount_options, AllOf(Contains("noexec"), Contains("noatime"),
                                          Not(Contains("nosuid")), Not(Contains("nodev"))));
}

// strictatime, nodiratime and lazytime: the kernel methods only.
TEST_P(KernelMountTest, AtimeFlagsFusermountCannotSet) {
  MountOptions options = OptionsFor(NewDirectory("mnt"), GetParam());
  options.flags.atime = AtimeUpdate::kEvery;
  options.flags.nodiratime = true;
  options.flags.lazytime = true;
  ServedMount served = MountAndServe(options);
  ASSERT_TRUE(served.mount.ok()) << served.mount.status();
  const std::optional<MountEntry> entry = FindMount(served.mount->mountpoint());
  ASSERT_TRUE(entry.has_value());
  EXPECT_THAT(entry->mount_options,
              AllOf(Contains("nodiratime"), Not(Contains("relatime")), Not(Contains("noatime"))));
  EXPECT_THAT(entry->super_options, Contains("lazytime"));
}

TEST_F(MountTest, FusermountRefusesTheAtimeFlagsItCannotSet) {
  SkipWithoutFusermount();
  if (IsSkipped()) return;
  MountOptions options = OptionsFor(NewDirectory("mnt"), MountMethod::kFusermount);
  options.flags.atime = AtimeUpdate::kEvery;
  const absl::StatusOr<internal::Mount> mount = internal::Mount::Create(options);
  EXPECT_EQ(mount.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mount.status().message(), HasSubstr("fusermount3 cannot set strictatime"));
  EXPECT_FALSE(FindMount(options.mountpoint).has_value());
}

TEST_P(MountMethodTest, UnmountRemovesTheMountAndEndsTheServer) {
  MountUnmountAndCheck(/*lazy=*/false);
}

TEST_P(MountMethodTest, LazyUnmountRemovesTheMountAndEndsTheServer) {
  MountUnmountAndCheck(/*lazy=*/true);
}

TEST_P(MountMethodTest, DestructorUnmounts) {
  std::unique_ptr<InitServer> server;
  std::string mountpoint;
  {
    ServedMount served = MountAndServe(OptionsFor(NewDirectory("mnt"), GetParam()));
    ASSERT_TRUE(served.mount.ok()) << served.mount.status();
    server = std::move(served.server);
    mountpoint = served.mount->mountpoint();
    ASSERT_TRUE(FindMount(mountpoint).has_value());
  }
  EXPECT_FALSE(FindMount(mountpoint).has_value());
  EXPECT_EQ(server->WaitForExit(kServerExitBound), ENODEV);
}

TEST_P(KernelMountTest, SyncInitAnswersInitBeforeCreateReturns) {
  MountOptions options = OptionsFor(NewDirectory("mnt"), GetParam());
  options.sync_init = true;
  ServedMount served = MountAndServe(options);
  ASSERT_TRUE(served.mount.ok()) << served.mount.status();
  ASSERT_NE(served.server, nullptr);
  // Without a synchronous INIT the server's first read, before the mount, fails with EPERM, and
  // INIT could not have been answered yet anyway.
  EXPECT_EQ(served.server->state(), internal::ConnectionState::kRunning);
  EXPECT_TRUE(FindMount(served.mount->mountpoint()).has_value());
}

TEST_P(KernelMountTest, BlksizeIsRefusedOutsideFuseblk) {
  MountOptions options = OptionsFor(NewDirectory("mnt"), GetParam());
  options.blksize = 4096;
  const absl::StatusOr<internal::Mount> mount = internal::Mount::Create(options);
  EXPECT_EQ(mount.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mount.status().message(),
              AllOf(HasSubstr(options.mountpoint), HasSubstr("blksize"), HasSubstr("fuseblk")));
  EXPECT_FALSE(FindMount(options.mountpoint).has_value());
}

// ---- The mountpoint ----

TEST_F(MountTest, MissingMountpointIsNotFound) {
  const std::string missing = root_ + "/missing";
  const absl::StatusOr<internal::Mount> mount =
      internal::Mount::Create(OptionsFor(missing, MountMethod::kAuto));
  EXPECT_EQ(mount.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(mount.status().message(), AllOf(HasSubstr(missing), HasSubstr("mkdir -p")));
}

TEST_F(MountTest, FileAsMountpointIsRefused) {
  const std::string file = root_ + "/file";
  std::ofstream(file) << "not a directory";
  const absl::StatusOr<internal::Mount> mount =
      internal::Mount::Create(OptionsFor(file, MountMethod::kAuto));
  EXPECT_EQ(mount.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(mount.status().message(), AllOf(HasSubstr(file), HasSubstr("not a directory")));
}

TEST_F(MountTest, NonEmptyMountpointIsRefusedWithoutNonempty) {
  const std::string mountpoint = NewDirectory("full");
  std::ofstream(mountpoint + "/kept") << "hidden by a mount";
  const absl::StatusOr<internal::Mount> mount =
      internal::Mount::Create(OptionsFor(mountpoint, MountMethod::kAuto));
  EXPECT_EQ(mount.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(mount.status().message(),
              AllOf(HasSubstr(mountpoint), HasSubstr("kept"), HasSubstr("nonempty")));
  EXPECT_FALSE(FindMount(mountpoint).has_value());
}

TEST_F(MountTest, NonEmptyMountpointMountsWithNonempty) {
  const std::string mountpoint = NewDirectory("full");
  const std::string kept = mountpoint + "/kept";
  std::ofstream(kept) << "hidden by a mount";
  MountOptions options = OptionsFor(mountpoint, MountMethod::kAuto);
  options.nonempty = true;
  ServedMount served = MountAndServe(options);
  ASSERT_TRUE(served.mount.ok()) << served.mount.status();
  EXPECT_TRUE(FindMount(mountpoint).has_value());

  ASSERT_TRUE(served.mount->Unmount().ok());
  EXPECT_TRUE(std::filesystem::exists(kept));
}

// A symlink is not followed, even to an empty directory: one planted where the directory was
// would send the mount wherever it points.
TEST_F(MountTest, SymlinkAsMountpointIsRefused) {
  const std::string target = NewDirectory("target");
  const std::string link = root_ + "/link";
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0) << std::strerror(errno);
  const absl::StatusOr<internal::Mount> mount =
      internal::Mount::Create(OptionsFor(link, MountMethod::kAuto));
  EXPECT_EQ(mount.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(mount.status().message(), AllOf(HasSubstr(link), HasSubstr("symbolic link")));
  EXPECT_FALSE(FindMount(target).has_value());
}

// ---- A mountpoint swapped for a symlink while it is mounted ----

constexpr int kSwapAttempts = 200;
constexpr auto kSwapBound = std::chrono::seconds(5);

// Exchanges two names in `directory` (renameat2 RENAME_EXCHANGE, atomic: both names always
// exist) on a thread of its own, as fast as it can, until stopped.
class NameSwapper {
 public:
  // Returns once the first exchange is made, so that the caller's next step runs under the swaps.
  NameSwapper(int directory, const char* one, const char* other) {
    thread_ = std::jthread([this, directory, one, other](const std::stop_token& stop) {
      do {
        if (renameat2(directory, one, directory, other, RENAME_EXCHANGE) != 0) {
          error_ = errno;
          return;
        }
        swaps_.fetch_add(1, std::memory_order_relaxed);
      } while (!stop.stop_requested());
    });
    while (swaps_.load() == 0 && error_.load() == 0) std::this_thread::yield();
  }
  NameSwapper(const NameSwapper&) = delete;
  NameSwapper& operator=(const NameSwapper&) = delete;

  // Returns after the last exchange; again, it does nothing.
  void Stop() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }
  uint64_t swaps() const { return swaps_.load(); }
  int error() const { return error_.load(); }

 private:
  std::atomic<uint64_t> swaps_{0};
  std::atomic<int> error_{0};
  std::jthread thread_;
};

// The mountpoint as the daemon's users can make it: `base`, a directory anyone may write to,
// holds `mp`, an empty directory, and `link`, a symlink to `victim`, a directory with a file in
// it. A NameSwapper exchanges mp and link, so that the name mp flips between the two.
class SwappedMountpointTest : public MountTest {
 protected:
  void SetUp() override {
    MountTest::SetUp();
    if (IsSkipped()) return;
    base_ = NewDirectory("base");
    ASSERT_EQ(chmod(base_.c_str(), 0777), 0) << std::strerror(errno);
    NewDirectory("base/mp");
    NewDirectory("base/victim");
    std::ofstream(Victim() + "/marker") << "stays visible unless something is mounted over it";
    ASSERT_EQ(symlink(Victim().c_str(), (base_ + "/link").c_str()), 0) << std::strerror(errno);
    base_fd_.reset(open(base_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    directory_.reset(open(Mountpoint().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(base_fd_.valid() && directory_.valid()) << std::strerror(errno);
  }

  std::string Mountpoint() const { return base_ + "/mp"; }
  std::string Victim() const { return base_ + "/victim"; }
  std::unique_ptr<NameSwapper> StartSwapping() const {
    return std::make_unique<NameSwapper>(base_fd_.get(), "mp", "link");
  }

  // Where the directory first named mp is now, mp or link (read from our fd, not by name).
  std::string DirectoryPath() const {
    std::error_code error;
    return std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(directory_.get()),
                                         error);
  }

  // A mount on victim, or its marker hidden (by a mount that mountinfo names otherwise). The
  // mountinfo check comes first: a FUSE mount there is served, but should not need to be.
  bool VictimCovered() const {
    return FindMount(Victim()).has_value() || access((Victim() + "/marker").c_str(), F_OK) != 0;
  }

  std::string base_;
  base::UniqueFd base_fd_;
  base::UniqueFd directory_;  // mp as it was made
};

class SwappedMountpointByMethodTest : public SwappedMountpointTest,
                                      public ::testing::WithParamInterface<MountMethod> {};

INSTANTIATE_TEST_SUITE_P(KernelMethods, SwappedMountpointByMethodTest,
                         ::testing::Values(MountMethod::kMountSyscall, MountMethod::kNewMountApi),
                         MethodParamName);

// Each attempt either mounts on the directory it checked, or finds the symlink and refuses. The
// swaps stop once the kernel has mounted (after_mount), so that what follows checks a still
// tree; the unmount goes by the Mount's own name for the directory.
TEST_P(SwappedMountpointByMethodTest, MountLandsOnTheCheckedDirectoryNeverThroughTheSymlink) {
  const MountOptions options = OptionsFor(Mountpoint(), GetParam());
  int attempts = 0;
  int mounted = 0;
  uint64_t swaps = 0;
  const auto deadline = std::chrono::steady_clock::now() + kSwapBound;
  while (attempts < kSwapAttempts && std::chrono::steady_clock::now() < deadline) {
    ++attempts;
    const std::unique_ptr<NameSwapper> swapper = StartSwapping();
    ASSERT_EQ(swapper->error(), 0)
        << "renameat2(RENAME_EXCHANGE): " << std::strerror(swapper->error());
    ServedMount served;
    served.mount = internal::Mount::Create(options, {}, [&](bool) { swapper->Stop(); });
    swapper->Stop();
    swaps += swapper->swaps();
    if (!served.mount.ok()) {
      ASSERT_EQ(served.mount.status().code(), absl::StatusCode::kFailedPrecondition)
          << served.mount.status();
      ASSERT_THAT(served.mount.status().message(), HasSubstr("symbolic link"));
      continue;
    }
    ++mounted;
    served.server = std::make_unique<InitServer>(served.mount->dev_fd());
    const std::string directory = DirectoryPath();
    ASSERT_FALSE(VictimCovered()) << "attempt " << attempts << " mounted through the symlink";
    ASSERT_EQ(served.mount->mountpoint(), directory);
    const std::optional<MountEntry> entry = FindMount(directory);
    ASSERT_TRUE(entry.has_value()) << directory << " is not in /proc/self/mountinfo";
    ASSERT_EQ(entry->minor, served.mount->connection_id());
    ASSERT_TRUE(served.mount->Unmount().ok());
  }
  std::printf("%d attempts in all, %d mounted, %d refused the symlink; %llu swaps\n", attempts,
              mounted, attempts - mounted, static_cast<unsigned long long>(swaps));
  EXPECT_GT(mounted, 0);
  EXPECT_GT(attempts - mounted, 0) << "no attempt met the symlink: the swaps proved nothing";
}

// The old way, checked by name, resolved to a string and mounted by that string: a tmpfs, since
// where the mount lands is the point, not what is mounted. True if it mounted somewhere.
bool MountByResolvedName(const std::string& mountpoint) {
  struct stat attributes {};
  std::error_code error;
  if (stat(mountpoint.c_str(), &attributes) != 0 || !S_ISDIR(attributes.st_mode)) return false;
  if (!std::filesystem::is_empty(mountpoint, error) || error) return false;
  const std::filesystem::path resolved = std::filesystem::canonical(mountpoint, error);
  if (error) return false;
  return mount("ringfuse-control", resolved.c_str(), "tmpfs", 0, nullptr) == 0;
}

// Negative control: under the same swaps, the old way lands on victim, a directory its own
// check (is mp an empty directory?) never looked at, within the same bound.
TEST_F(SwappedMountpointTest, NegativeControlMountingByResolvedNameLandsOnTheVictim) {
  int attempts = 0;
  uint64_t swaps = 0;
  bool landed = false;
  const auto deadline = std::chrono::steady_clock::now() + kSwapBound;
  while (!landed && std::chrono::steady_clock::now() < deadline) {
    ++attempts;
    const std::unique_ptr<NameSwapper> swapper = StartSwapping();
    ASSERT_EQ(swapper->error(), 0)
        << "renameat2(RENAME_EXCHANGE): " << std::strerror(swapper->error());
    MountByResolvedName(Mountpoint());
    swapper->Stop();
    swaps += swapper->swaps();
    landed = VictimCovered();
    DetachMountsUnder(base_);
  }
  std::printf("the old way landed on victim: %s, after %d attempts and %llu swaps\n",
              landed ? "yes" : "no", attempts, static_cast<unsigned long long>(swaps));
  EXPECT_TRUE(landed) << "in " << attempts << " attempts";
}

// ---- Options that do not go together, and unmounting twice ----

TEST_F(MountTest, AutoUnmountNeedsFusermount) {
  MountOptions options = OptionsFor(NewDirectory("mnt"), MountMethod::kMountSyscall);
  options.auto_unmount = true;
  const absl::StatusOr<internal::Mount> mount = internal::Mount::Create(options);
  EXPECT_EQ(mount.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mount.status().message(),
              AllOf(HasSubstr(options.mountpoint), HasSubstr("kFusermount")));
}

TEST_F(MountTest, SyncInitNeedsAKernelMount) {
  MountOptions options = OptionsFor(NewDirectory("mnt"), MountMethod::kFusermount);
  options.sync_init = true;
  const absl::StatusOr<internal::Mount> mount = internal::Mount::Create(options);
  EXPECT_EQ(mount.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mount.status().message(),
              AllOf(HasSubstr(options.mountpoint), HasSubstr("kMountSyscall")));
}

TEST_F(MountTest, UnmountingTwiceIsAnError) {
  ServedMount served = MountAndServe(OptionsFor(NewDirectory("mnt"), MountMethod::kAuto));
  ASSERT_TRUE(served.mount.ok()) << served.mount.status();
  ASSERT_TRUE(served.mount->Unmount().ok());
  const absl::Status again = served.mount->Unmount();
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(again.message(), HasSubstr(served.mount->mountpoint()));
}

// ---- What is missing: /dev/fuse, fusermount3 (hidden in a child's own mount namespace) ----

TEST_F(MountTest, MissingDevFuseIsNotFound) {
  const std::string mountpoint = NewDirectory("mnt");
  std::map<std::string, std::string> report = CreateInChild(
      [] { return HideUnderTmpfs("/dev"); }, OptionsFor(mountpoint, MountMethod::kMountSyscall));
  ASSERT_EQ(report["error"], "");
  EXPECT_EQ(report["create_code"], "NOT_FOUND");
  EXPECT_THAT(
      report["create_message"],
      AllOf(HasSubstr(mountpoint), HasSubstr(internal::kDevFusePath), HasSubstr("modprobe fuse")));
}

TEST_F(MountTest, MissingFusermountIsNotFound) {
  const std::string mountpoint = NewDirectory("mnt");
  std::map<std::string, std::string> report = CreateInChild(
      [] { return HideUnderTmpfs("/usr/bin"); }, OptionsFor(mountpoint, MountMethod::kFusermount));
  ASSERT_EQ(report["error"], "");
  EXPECT_EQ(report["create_code"], "NOT_FOUND");
  EXPECT_THAT(report["create_message"],
              AllOf(HasSubstr(mountpoint), HasSubstr("fusermount3"), HasSubstr("install fuse3")));
}

// ---- fusermount3 for a user without privileges ----

// As nobody: mount(2) is refused, an unreachable mountpoint is refused, and fusermount3 mounts
// (with auto_unmount) and unmounts. Runs in a child, since setuid cannot be undone.
void MountAsNobody(int report, const std::string& mountpoint, const std::string& unreachable) {
  if (!BecomeNobody()) return Report(report, "error", std::strerror(errno));
  ReportStatus(
      report, "syscall",
      internal::Mount::Create(OptionsFor(mountpoint, MountMethod::kMountSyscall)).status());
  ReportStatus(report, "unreachable",
               internal::Mount::Create(OptionsFor(unreachable, MountMethod::kAuto)).status());

  MountOptions options = OptionsFor(mountpoint, MountMethod::kAuto);
  options.default_permissions = true;
  options.auto_unmount = true;  // a helper that runs as root, which nobody must stop and reap
  ServedMount served = MountAndServe(options);
  ReportStatus(report, "create", served.mount.status());
  if (!served.mount.ok()) return;
  Report(report, "method", MethodName(served.mount->method()));
  const std::optional<MountEntry> entry = FindMount(served.mount->mountpoint());
  Report(report, "fstype", entry ? entry->fstype : "(not mounted)");
  Report(report, "source", entry ? entry->source : "(not mounted)");
  Report(report, "options", entry ? absl::StrJoin(entry->super_options, ",") : "(not mounted)");
  Report(report, "id_matches",
         entry && entry->minor == served.mount->connection_id() ? "yes" : "no");

  ReportStatus(report, "unmount", served.mount->Unmount());
  Report(report, "still_mounted", FindMount(served.mount->mountpoint()) ? "yes" : "no");
  Report(report, "children_left", waitpid(-1, nullptr, WNOHANG) == -1 ? "none" : "some");
  const std::optional<int> server_exit = served.server->WaitForExit(kServerExitBound);
  Report(report, "server_exit", server_exit ? std::strerror(*server_exit) : "still running");
}

TEST_F(MountTest, UnprivilegedUserMountsThroughFusermount) {
  SkipWithoutFusermount();
  // Without udev /dev/fuse is 0600, and fusermount3 opens it as the calling user.
  const DevFuseModeGuard open_to_all(0666);
  ASSERT_TRUE(open_to_all.changed()) << "cannot chmod " << internal::kDevFusePath;
  const std::string mountpoint = NewDirectoryOfNobody("users");
  const std::string hidden = NewDirectory("private");
  ASSERT_EQ(chmod(hidden.c_str(), 0700), 0);
  const std::string unreachable = NewDirectory("private/mnt");

  Child child([&](int report) { MountAsNobody(report, mountpoint, unreachable); }, kChildBound);
  ASSERT_TRUE(child.started());
  std::map<std::string, std::string> report = child.ReadReport(kChildBound, "server_exit");
  ASSERT_EQ(report["error"], "");

  EXPECT_EQ(report["syscall_code"], "PERMISSION_DENIED");
  EXPECT_THAT(report["syscall_message"], AllOf(HasSubstr(mountpoint), HasSubstr("CAP_SYS_ADMIN")));
  EXPECT_EQ(report["unreachable_code"], "PERMISSION_DENIED");
  EXPECT_THAT(report["unreachable_message"], HasSubstr(unreachable));

  ASSERT_EQ(report["create_code"], "OK") << report["create_message"];
  EXPECT_EQ(report["method"], "Fusermount");
  EXPECT_EQ(report["fstype"], "fuse.mounttest");
  EXPECT_EQ(report["source"], kFsname);
  EXPECT_THAT(report["options"], AllOf(HasSubstr("user_id=65534"), HasSubstr("group_id=65534"),
                                       HasSubstr("default_permissions")));
  EXPECT_EQ(report["id_matches"], "yes");
  EXPECT_EQ(report["unmount_code"], "OK") << report["unmount_message"];
  EXPECT_EQ(report["still_mounted"], "no");
  EXPECT_EQ(report["children_left"], "none");
  EXPECT_EQ(report["server_exit"], std::strerror(ENODEV));
  EXPECT_FALSE(FindMount(mountpoint).has_value());
}

TEST_F(MountTest, FusermountFailureGivesItsExitStatusAndWhatToDo) {
  SkipWithoutFusermount();
  const DevFuseModeGuard closed_to_users(0600);
  ASSERT_TRUE(closed_to_users.changed()) << "cannot chmod " << internal::kDevFusePath;
  const std::string mountpoint = NewDirectoryOfNobody("users");

  std::map<std::string, std::string> report =
      CreateInChild(BecomeNobody, OptionsFor(mountpoint, MountMethod::kFusermount));
  ASSERT_EQ(report["error"], "");
  EXPECT_EQ(report["create_code"], "PERMISSION_DENIED");
  EXPECT_THAT(report["create_message"],
              AllOf(HasSubstr(mountpoint), HasSubstr("exited with status 1"),
                    HasSubstr("chmod 0666 /dev/fuse")));
}

// ---- auto_unmount ----

// Mounts with auto_unmount, reports, and waits to be killed.
void MountAndWait(int report, const std::string& mountpoint) {
  MountOptions options = OptionsFor(mountpoint, MountMethod::kAuto);
  options.auto_unmount = true;
  ServedMount served = MountAndServe(options);
  ReportStatus(report, "create", served.mount.status());
  if (!served.mount.ok()) return;
  Report(report, "method", MethodName(served.mount->method()));
  Report(report, "mounted", "yes");
  for (;;) pause();
}

TEST_F(MountTest, AutoUnmountMountUnmountsAndReapsItsHelper) {
  SkipWithoutFusermount();
  MountOptions options = OptionsFor(NewDirectory("mnt"), MountMethod::kAuto);
  options.auto_unmount = true;
  ServedMount served = MountAndServe(options);
  ASSERT_TRUE(served.mount.ok()) << served.mount.status();
  EXPECT_EQ(served.mount->method(), MountMethod::kFusermount);

  ASSERT_TRUE(served.mount->Unmount().ok());
  EXPECT_FALSE(FindMount(served.mount->mountpoint()).has_value());
  EXPECT_EQ(served.server->WaitForExit(kServerExitBound), ENODEV);
  // fusermount3, the one that stayed for auto_unmount included, has been waited for.
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

// Orphans of our children come to us while it lives, so that we can reap them.
class SubreaperGuard {
 public:
  SubreaperGuard() : adopted_(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0) {}
  SubreaperGuard(const SubreaperGuard&) = delete;
  SubreaperGuard& operator=(const SubreaperGuard&) = delete;
  ~SubreaperGuard() {
    if (adopted_) prctl(PR_SET_CHILD_SUBREAPER, 0);
  }
  bool adopted() const { return adopted_; }

 private:
  bool adopted_;
};

bool ReapedEveryChild() {
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  return errno == ECHILD;
}

TEST_F(MountTest, AutoUnmountRemovesTheMountWhenTheDaemonIsKilled) {
  SkipWithoutFusermount();
  // The daemon's fusermount3 outlives it.
  const SubreaperGuard adopt_orphans;
  ASSERT_TRUE(adopt_orphans.adopted()) << std::strerror(errno);
  const std::string mountpoint = NewDirectory("mnt");
  Child daemon([&](int report) { MountAndWait(report, mountpoint); }, std::chrono::seconds(60));
  ASSERT_TRUE(daemon.started());
  std::map<std::string, std::string> report = daemon.ReadReport(kChildBound, "mounted");
  ASSERT_EQ(report["create_code"], "OK") << report["create_message"];
  EXPECT_EQ(report["method"], "Fusermount");
  ASSERT_TRUE(FindMount(mountpoint).has_value());

  daemon.Kill();
  EXPECT_TRUE(WaitFor([&] { return !FindMount(mountpoint).has_value(); }, kMountGoneBound))
      << mountpoint << " is still mounted after its daemon died";
  EXPECT_TRUE(WaitFor(ReapedEveryChild, kServerExitBound)) << "fusermount3 did not exit";
}

}  // namespace
}  // namespace ringfuse
