// A SOURCE directory served by PassthroughFs through a real mount, for the read-write tests.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "daemon/fs/passthrough_fs.h"
#include "daemon/session_options.h"
#include "gtest/gtest.h"
#include "tests/daemon/test_files.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::daemon {

class PassthroughMountTest : public ringfuse::testing::TransportTest {
 protected:
  // `parent`: where the test's directory, and SOURCE in it, are made.
  explicit PassthroughMountTest(std::string_view parent = "/tmp")
      : top_("ringfuse-write", parent) {}

  // SOURCE is <top>/source, so a test may keep files next to it, outside SOURCE, in <top>.
  void SetUp() override {
    TransportTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_FALSE(top_.path().empty()) << std::strerror(errno);
    source_ = top_.path() + "/source";
    ASSERT_EQ(::mkdir(source_.c_str(), 0755), 0);
  }
  void TearDown() override { Unmount(); }

  // Mounts SOURCE served with `options`; the kernel mounts it as `mount_options` say, by
  // default the same (source and mountpoint are filled in here).
  void Mount(DaemonOptions options = {}, std::optional<DaemonOptions> mount_options = {}) {
    options.source = source_;
    if (mount_options) mount_options->source = source_;
    fs_ = std::make_unique<PassthroughFs>(
        base::UniqueFd(::open(source_.c_str(), O_PATH | O_CLOEXEC)), options);
    SessionOptions session = MakeSessionOptions(mount_options.value_or(options));
    session.backing_files = &fs_->backing_files();
    absl::StatusOr<std::unique_ptr<ringfuse::testing::ServedMount>> mount =
        ringfuse::testing::ServedMount::Start(*fs_, GetParam(), session);
    ASSERT_TRUE(mount.ok()) << mount.status();
    mount_ = std::move(*mount);
    fs_->SetNotifier(&mount_->session().notifier());
  }
  void Unmount() {
    mount_.reset();
    fs_.reset();
  }

  // Whether `count` lock requests are waiting in the daemon within `bound`: a waiting caller is
  // then known to be blocked there, not about to be.
  bool AwaitLockWaits(size_t count,
                      std::chrono::milliseconds bound = std::chrono::seconds(10)) const {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    while (fs_->counts().pending_lock_waits != count) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  std::string Source(const std::string& relative) const { return source_ + "/" + relative; }
  std::string Mounted(const std::string& relative) const { return mount_->Path(relative); }

  static struct stat Lstat(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path << ": " << std::strerror(errno);
    return st;
  }

  ringfuse::testing::TempDir top_;
  std::string source_;
  std::unique_ptr<PassthroughFs> fs_;
  std::unique_ptr<ringfuse::testing::ServedMount> mount_;
};

// SOURCE served with the default options, mounted before each test.
class MountedPassthroughTest : public PassthroughMountTest {
 protected:
  void SetUp() override {
    PassthroughMountTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    Mount();
  }
};

// errno of a call returning -1, or 0 when it succeeded.
inline int ErrnoOf(long result) { return result < 0 ? errno : 0; }

}  // namespace ringfuse::daemon
