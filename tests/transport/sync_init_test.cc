// Session with MountOptions::sync_init (FUSE_DEV_IOC_SYNC_INIT, Linux 6.18): INIT is answered
// while mount() waits for it, so a good INIT leaves a served mount once Session::Start returns,
// and an INIT the session refuses, or a mount that fails before INIT, fails Session::Start and
// leaves nothing mounted.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "examples/memfs/memfs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse {
namespace {

using ::testing::HasSubstr;

constexpr auto kStartBound = std::chrono::seconds(20);

bool Mounted(const std::string& path) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, where;
    if (fields >> id >> parent >> device >> root >> where && where == path) return true;
  }
  return false;
}

// Session::Start within kStartBound. Past it, mount() is still waiting for an INIT nobody will
// answer: only this process's end closes the fd and ends that wait, with nothing mounted.
absl::StatusOr<std::unique_ptr<Session>> StartBounded(const SessionOptions& options,
                                                      Handler& handler) {
  auto started = std::make_shared<std::promise<absl::StatusOr<std::unique_ptr<Session>>>>();
  std::future<absl::StatusOr<std::unique_ptr<Session>>> result = started->get_future();
  std::thread([started, options, &handler] {
    started->set_value(Session::Start(options, handler));
  }).detach();
  if (result.wait_for(kStartBound) != std::future_status::ready) {
    std::fprintf(stderr, "Session::Start with sync_init did not return within %lld s\n",
                 static_cast<long long>(kStartBound.count()));
    std::_Exit(1);
  }
  return result.get();
}

class SyncInitTest : public ::testing::TestWithParam<MountMethod> {
 protected:
  void SetUp() override {
    if (auto why = testing::WhyKernelTestsCannotRun()) GTEST_SKIP() << *why;
    char dir_template[] = "/tmp/ringfuse-sync-init.XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr) << std::strerror(errno);
    dir_ = dir_template;
    options_.mount.mountpoint = dir_;
    options_.mount.method = GetParam();
    options_.mount.sync_init = true;
    options_.transport = TransportKind::kThreads;
  }

  // Every test leaves it unmounted (or stops the session) first.
  void TearDown() override {
    if (!dir_.empty()) ::rmdir(dir_.c_str());
  }

  std::string dir_;
  SessionOptions options_;
  examples::MemFs fs_;
};

INSTANTIATE_TEST_SUITE_P(KernelMethods, SyncInitTest,
                         ::testing::Values(MountMethod::kMountSyscall, MountMethod::kNewMountApi),
                         [](const auto& method) {
                           return method.param == MountMethod::kMountSyscall ? "MountSyscall"
                                                                             : "NewMountApi";
                         });

TEST_P(SyncInitTest, AGoodInitMountsAndServes) {
  absl::StatusOr<std::unique_ptr<Session>> session = StartBounded(options_, fs_);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_GT((*session)->negotiated().minor, 0u) << "INIT was not answered";
  const std::string file = dir_ + "/made";
  std::ofstream(file) << "served\n";
  std::ifstream read(file);
  std::string line;
  EXPECT_TRUE(std::getline(read, line));
  EXPECT_EQ(line, "served");
  (*session)->Stop();
  (*session)->Wait();
  EXPECT_FALSE(Mounted(dir_));
}

// Negative control of the one above: the session refuses INIT (it requires a flag no kernel
// offers), and the kernel fails the mount rather than leave a dead one.
TEST_P(SyncInitTest, ARefusedInitFailsStartAndLeavesNoMount) {
  options_.init.required_flags = uint64_t{1} << 63;
  const absl::StatusOr<std::unique_ptr<Session>> session = StartBounded(options_, fs_);
  ASSERT_FALSE(session.ok()) << "mounted although INIT was refused";
  EXPECT_THAT(session.status().message(),
              HasSubstr("INIT with the kernel failed, so nothing was mounted on " + dir_));
  EXPECT_THAT(session.status().message(), HasSubstr("BIT63"));
  EXPECT_FALSE(Mounted(dir_));
}

// The kernel refuses the mount before it sends INIT: the thread waiting for INIT is cancelled,
// and Start returns the mount's own error at once.
TEST_P(SyncInitTest, AMountRefusedBeforeInitFailsStartWithItsReason) {
  options_.mount.blksize = 4096;  // only for fuseblk
  const auto start = std::chrono::steady_clock::now();
  const absl::StatusOr<std::unique_ptr<Session>> session = StartBounded(options_, fs_);
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(), HasSubstr("blksize"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_FALSE(Mounted(dir_));
}

}  // namespace
}  // namespace ringfuse
