// -o passthrough: the kernel reads and writes regular files itself, through the backing file the
// daemon registered at open; the daemon sees no READ or WRITE for them.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "tests/daemon/child_process.h"
#include "tests/daemon/kernel_passthrough.h"
#include "tests/daemon/passthrough_fixture.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::ReadFile;
using ringfuse::testing::WriteFile;

// Whether process `pid` runs `program` within a bound.
bool AwaitRunning(pid_t pid, const std::string& program) {
  const std::string exe = "/proc/" + std::to_string(pid) + "/exe";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::error_code error;
  while (std::filesystem::read_symlink(exe, error) != program) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

class KernelPassthrough : public PassthroughMountTest {
 protected:
  void SetUp() override {
    PassthroughMountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    MountPassthrough(/*cache=*/false);  // no page cache: only passthrough keeps I/O from the daemon
  }

  // Mounts SOURCE with kernel passthrough, or skips with the reason where the kernel refuses it
  // (passthrough is a flag the mount requires, so there the mount itself fails); any other
  // failure fails the test.
  void MountPassthrough(bool cache, bool read_only = false) {
    DaemonOptions options;
    options.source = source_;
    options.passthrough = true;
    options.cache = cache;
    options.mount.read_only = read_only;
    fs_ = std::make_unique<PassthroughFs>(
        base::UniqueFd(::open(source_.c_str(), O_PATH | O_CLOEXEC)), options);
    SessionOptions session = MakeSessionOptions(options);
    session.backing_files = &fs_->backing_files();
    absl::StatusOr<std::unique_ptr<ringfuse::testing::ServedMount>> mount =
        ringfuse::testing::ServedMount::Start(*fs_, GetParam(), session);
    if (!mount.ok()) RINGFUSE_SKIP_ONLY_IF_KERNEL_REFUSES_PASSTHROUGH(mount.status());
    mount_ = std::move(*mount);
    if (absl::Status works = fs_->CheckPassthroughWorks(); !works.ok()) {
      RINGFUSE_SKIP_ONLY_IF_KERNEL_REFUSES_PASSTHROUGH(works);
    }
  }
};

TEST_P(KernelPassthrough, ReadsAndWritesBypassTheDaemon) {
  WriteFile(Source("file"), "backing bytes");
  const int fd = ::open(Mounted("file").c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  char buffer[64] = {};
  ASSERT_EQ(::pread(fd, buffer, sizeof(buffer), 0), 13);
  EXPECT_EQ(std::string(buffer, 13), "backing bytes");
  ASSERT_EQ(::pwrite(fd, "BACKING", 7, 0), 7);
  ::close(fd);
  EXPECT_EQ(ReadFile(Source("file")), "BACKING bytes");

  const int created = ::open(Mounted("new").c_str(), O_CREAT | O_RDWR, 0600);
  ASSERT_GE(created, 0) << std::strerror(errno);
  ASSERT_EQ(::write(created, "through create", 14), 14);
  ::close(created);
  EXPECT_EQ(ReadFile(Source("new")), "through create");
  EXPECT_EQ(ReadFile(Mounted("new")), "through create");
  EXPECT_EQ(fs_->counts().reads, 0u);
  EXPECT_EQ(fs_->counts().writes, 0u);
}

// The control: the same I/O without passthrough does reach the daemon.
TEST_P(KernelPassthrough, WithoutItTheDaemonServesTheIo) {
  Unmount();
  DaemonOptions options;
  options.cache = false;
  ASSERT_NO_FATAL_FAILURE(Mount(options));
  WriteFile(Mounted("file"), "served");
  EXPECT_EQ(ReadFile(Mounted("file")), "served");
  EXPECT_GT(fs_->counts().reads, 0u);
  EXPECT_GT(fs_->counts().writes, 0u);
}

// Whether `program` runs to exit 0 natively; else its errno (ETXTBSY while anyone writes it).
int RunsNatively(const std::string& program) {
  return RunInChild([&program] {
    ::execl(program.c_str(), "prog", nullptr);
    return errno;
  });
}

// An inode's opens share one registration, made read-only (backing_ids.h), and the kernel opens
// a backing file of its own for each open: a reader through the mount keeps SOURCE's program
// from running natively no more than a native reader does, and a writer keeps it from running
// while, and only while, it has it open, as a native writer does. Before, the registration was
// made read-write, and the reader alone made the run fail with ETXTBSY.
TEST_P(KernelPassthrough, OnlyAWriterThroughTheMountKeepsTheProgramFromRunning) {
  Unmount();
  MountPassthrough(/*cache=*/true);
  if (IsSkipped() || HasFatalFailure()) return;
  std::filesystem::copy_file("/bin/true", Source("prog"));
  const int reading = ::open(Mounted("prog").c_str(), O_RDONLY);
  ASSERT_GE(reading, 0) << std::strerror(errno);
  char first = 0;
  EXPECT_EQ(::read(reading, &first, 1), 1);
  EXPECT_EQ(fs_->counts().reads, 0u) << "the read went through the backing file";
  EXPECT_EQ(RunsNatively(Source("prog")), 0);

  const int writing = ::open(Mounted("prog").c_str(), O_RDWR);
  ASSERT_GE(writing, 0) << std::strerror(errno);
  EXPECT_EQ(RunsNatively(Source("prog")), ETXTBSY);
  ::close(writing);
  EXPECT_EQ(RunsNatively(Source("prog")), 0) << "the writer has closed";
  ::close(reading);
}

// A writer through the mount gets what a native writer gets: ETXTBSY while SOURCE's program runs,
// its open once the program has ended, though a reader through the mount still holds the
// inode's registration made while it ran; and its writes bypass the daemon.
TEST_P(KernelPassthrough, AWriterIsRefusedWhileTheProgramRunsOnly) {
  Unmount();
  MountPassthrough(/*cache=*/true);
  if (IsSkipped() || HasFatalFailure()) return;
  std::filesystem::copy_file("/bin/sleep", Source("prog"));
  const std::string program = Source("prog");
  Child running([&program] {
    ::execl(program.c_str(), "prog", "30", nullptr);
    return errno;
  });
  ASSERT_TRUE(AwaitRunning(running.pid(), program));
  const int reading = ::open(Mounted("prog").c_str(), O_RDONLY);
  ASSERT_GE(reading, 0) << std::strerror(errno);
  EXPECT_EQ(ErrnoOf(::open(Mounted("prog").c_str(), O_RDWR)), ETXTBSY);
  ::kill(running.pid(), SIGKILL);
  ASSERT_TRUE(running.Wait(std::chrono::seconds(5)).has_value());

  const int writing = ::open(Mounted("prog").c_str(), O_RDWR);
  ASSERT_GE(writing, 0) << "with the program ended: " << std::strerror(errno);
  EXPECT_EQ(::pwrite(writing, "#!", 2, 0), 2);
  EXPECT_EQ(fs_->counts().writes, 0u) << "the write went through the backing file";
  ::close(writing);
  ::close(reading);
  EXPECT_EQ(ReadFile(program).substr(0, 2), "#!");
}

INSTANTIATE_TEST_SUITE_P(Transports, KernelPassthrough, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
