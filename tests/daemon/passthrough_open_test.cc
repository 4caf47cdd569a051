// Opens the daemon makes for the kernel, compared with the same calls on a native directory:
// an execve needs only the right to execute, and CREATE on a name SOURCE has since filled with a
// FIFO or a device never opens it.
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "tests/daemon/child_process.h"
#include "tests/daemon/passthrough_fixture.h"

namespace ringfuse::daemon {
namespace {

constexpr uid_t kOwner = 65534;  // owns the program
constexpr uid_t kRunner = 1000;  // runs it: neither its owner nor in its group
constexpr auto kBound = std::chrono::seconds(5);

class PassthroughOpen : public PassthroughMountTest {
 protected:
  void SetUp() override {
    PassthroughMountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    native_ = top_.path() + "/native";
    ASSERT_EQ(::mkdir(native_.c_str(), 0755), 0);
    ASSERT_EQ(::chmod(top_.path().c_str(), 0755), 0);  // other users reach both trees
    ASSERT_EQ(::chmod(source_.c_str(), 0755), 0);
  }

  // /bin/true as `name` in SOURCE and in the native tree, owned by kOwner with `mode`.
  void InstallProgram(const std::string& name, mode_t mode) {
    for (const std::string& path : {Source(name), native_ + "/" + name}) {
      std::filesystem::copy_file("/bin/true", path);
      ASSERT_EQ(::chown(path.c_str(), kOwner, kOwner), 0);
      ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    }
  }

  std::string native_;
};

// As kRunner, in a child bounded in time: `step`'s errno, 0 for success.
int AsRunner(const std::function<int()>& step) {
  return RunInChild(
      [&] {
        if (::setgroups(0, nullptr) != 0 || ::setgid(kRunner) != 0 || ::setuid(kRunner) != 0) {
          return 200;
        }
        return step();
      },
      -1, kBound);
}

// Runs `path`: its exit code (0 for /bin/true), or the errno of execve.
int RunAsRunner(const std::string& path) {
  return AsRunner([&path] {
    ::execl(path.c_str(), "prog", nullptr);
    return errno;
  });
}

int ReadOpen(const std::string& path) {
  return AsRunner([&path] { return ErrnoOf(::open(path.c_str(), O_RDONLY)); });
}

void ExpectExecuteWithoutRead(const std::string& native, const std::string& mounted) {
  EXPECT_EQ(RunAsRunner(native), 0) << "natively a program one may only execute runs";
  EXPECT_EQ(RunAsRunner(mounted), 0) << "and through the mount too";
  EXPECT_EQ(ReadOpen(native), EACCES);
  EXPECT_EQ(ReadOpen(mounted), EACCES) << "reading it stays refused";
}

TEST_P(PassthroughOpen, AProgramOneMayExecuteButNotReadRunsWithDefaultPermissions) {
  DaemonOptions options;
  options.mount.allow_other = true;
  options.mount.default_permissions = true;
  Mount(options);
  InstallProgram("prog", 0711);
  ExpectExecuteWithoutRead(native_ + "/prog", Mounted("prog"));
}

// Without default_permissions the daemon alone checks the right to execute.
TEST_P(PassthroughOpen, AProgramOneMayExecuteButNotReadRunsWithoutDefaultPermissions) {
  DaemonOptions options;
  options.mount.allow_other = true;
  Mount(options);
  InstallProgram("prog", 0711);
  ExpectExecuteWithoutRead(native_ + "/prog", Mounted("prog"));
  InstallProgram("owners", 0700);
  EXPECT_EQ(RunAsRunner(native_ + "/owners"), EACCES);
  EXPECT_EQ(RunAsRunner(Mounted("owners")), EACCES) << "no right to execute, no run";
}

// The kernel caches "fifo" and "device" as missing, SOURCE then gets them natively, and an
// O_CREAT open through the mount sends CREATE for them. Natively that open would open the FIFO
// (and wait for a reader) or the device; the daemon refuses EEXIST instead of blocking a worker
// or opening a device past the mount's nodev, and the kernel's next open sees what is there.
TEST_P(PassthroughOpen, CreateOnANameSourceFilledWithAFifoOrDeviceOpensNothing) {
  DaemonOptions options;
  options.negative_timeout = {60, 0};
  Mount(options);
  struct stat st;
  ASSERT_EQ(ErrnoOf(::stat(Mounted("fifo").c_str(), &st)), ENOENT);
  ASSERT_EQ(ErrnoOf(::stat(Mounted("device").c_str(), &st)), ENOENT);
  ASSERT_EQ(::mkfifo(Source("fifo").c_str(), 0666), 0);
  ASSERT_EQ(::mknod(Source("device").c_str(), S_IFCHR | 0666, ::makedev(1, 3)), 0);

  auto create = [](const std::string& path) {
    return RunInChild([&path] { return ErrnoOf(::open(path.c_str(), O_WRONLY | O_CREAT, 0644)); },
                      -1, kBound);
  };
  const int fifo_error = create(Mounted("fifo"));
  // A worker still blocked opening the FIFO for writing (the failure) is let go by a reader.
  ::close(::open(Source("fifo").c_str(), O_RDONLY | O_NONBLOCK));
  EXPECT_EQ(fifo_error, EEXIST) << "-1: the open never returned";
  EXPECT_EQ(create(Mounted("device")), EEXIST);

  // Then the kernel knows them: the FIFO as natively (no reader), the device refused by nodev.
  const int no_reader = ErrnoOf(::open(Source("fifo").c_str(), O_WRONLY | O_NONBLOCK));
  EXPECT_EQ(no_reader, ENXIO);
  EXPECT_EQ(ErrnoOf(::open(Mounted("fifo").c_str(), O_WRONLY | O_NONBLOCK)), no_reader);
  EXPECT_EQ(ErrnoOf(::open(Mounted("device").c_str(), O_WRONLY | O_CREAT, 0644)), EACCES);
  EXPECT_EQ(fs_->counts().open_handles, 0u) << "nothing was opened in SOURCE";
}

// The kernel opens a FIFO of the mount as a pipe itself, sending no OPEN: the daemon's refusal
// of OPEN on a FIFO node (ENXIO, for a writer of /dev/fuse that is not the kernel) costs no
// caller anything.
TEST_P(PassthroughOpen, AFifoWorksThroughTheMountWithoutTheDaemonOpeningIt) {
  Mount(DaemonOptions{});
  ASSERT_EQ(::mkfifo(Source("fifo").c_str(), 0666), 0);
  const int pipe = ::open(Mounted("fifo").c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(pipe, 0) << std::strerror(errno);
  char byte = 'x';
  EXPECT_EQ(::write(pipe, &byte, 1), 1);
  byte = 0;
  EXPECT_EQ(::read(pipe, &byte, 1), 1);
  EXPECT_EQ(byte, 'x');
  EXPECT_EQ(fs_->counts().open_handles, 0u) << "nothing was opened in SOURCE";
  ::close(pipe);
}

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughOpen, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
