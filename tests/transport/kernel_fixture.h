// What every test that mounts needs: the reasons to skip, the FUSE-over-io_uring switch, and a
// served mount that always comes down, within a time bound, even when the test fails.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "base/uring_switch.h"
#include "gtest/gtest.h"
#include "ringfuse/handler.h"
#include "ringfuse/session.h"
#include "transport/dev_fuse.h"

namespace ringfuse::testing {

// Empty when this process can mount FUSE filesystems here; otherwise why not.
std::optional<std::string> WhyKernelTestsCannotRun();

// Switches /sys/module/fuse/parameters/enable_uring to Y and back to its old value when
// destroyed. ok() is false, with reason(), where the kernel has no such switch.
class UringEnabled {
 public:
  UringEnabled();
  bool ok() const { return reason_.empty(); }
  const std::string& reason() const { return reason_; }

 private:
  base::UringSwitch switch_;
  std::string reason_;
};

// One mounted filesystem served by a Session over one transport, in a fresh temporary
// directory. The destructor stops the session, waits at most kStopBound for every thread,
// aborts the connection if that bound passes (and reports the failure), and removes the directory.
// A watchdog aborts the connection if the mount outlives kWatchdogBound, so that a client call
// that would hang fails instead, well before ctest's timeout would kill the process and leave a
// dead mount behind.
class ServedMount {
 public:
  static constexpr std::chrono::seconds kStopBound{5};
  static constexpr std::chrono::seconds kWatchdogBound{40};

  static absl::StatusOr<std::unique_ptr<ServedMount>> Start(Handler& handler,
                                                            TransportKind transport,
                                                            SessionOptions options = {});
  ~ServedMount();

  const std::string& root() const { return root_; }
  std::string Path(const std::string& relative) const { return root_ + "/" + relative; }
  Session& session() { return *session_; }
  // After the session handed its connection over (ringfuse/handover.h): lets the ended session
  // go, so that its handler may go too, as the old process's do when it exits. The mount, served
  // by another session now, stays watched and is unmounted by that session.
  void ReleaseHandedOverSession() { session_.reset(); }

  // Stops the session and returns how long the stop took, in milliseconds, or -1 past the bound.
  long StopAndJoin();

 private:
  ServedMount() = default;

  void Watch();

  std::string root_;
  std::unique_ptr<Session> session_;
  uint32_t connection_id_ = 0;  // the watchdog's, which outlives a handed-over session_
  bool joined_ = false;
  std::mutex watchdog_mutex_;
  std::condition_variable watchdog_wake_;
  bool ending_ = false;
  std::thread watchdog_;
};

// Waits for the session to end by itself (unmounted or aborted from outside), at most `bound`.
bool WaitsForEnd(Session& session, std::chrono::milliseconds bound);

// The attributes of the tiny fixed trees some tests serve: the root directory, and a regular
// file `ino` of `size` bytes.
inline wire::Attr RootDirectoryAttr() {
  wire::Attr attr{};
  attr.ino = wire::kRootId;
  attr.mode = S_IFDIR | 0755;
  attr.nlink = 2;
  return attr;
}
inline wire::Attr RegularFileAttr(uint64_t ino, uint64_t size) {
  wire::Attr attr{};
  attr.ino = ino;
  attr.mode = S_IFREG | 0644;
  attr.nlink = 1;
  attr.size = size;
  return attr;
}

// For tests parameterized over the three transports.
inline const auto kEveryTransport =
    ::testing::Values(TransportKind::kThreads, TransportKind::kUring, TransportKind::kUringCmd);
std::string TransportTestName(const ::testing::TestParamInfo<TransportKind>& param_info);

// Base of the tests parameterized over the transports: SetUp skips, saying why, where the kernel
// cannot run them, and for uring-cmd switches FUSE-over-io_uring on until the test ends.
// Derived fixtures declare their mounts after this base's members, so the switch outlives them,
// and begin their own SetUp with `TransportTest::SetUp(); if (IsSkipped()) return;`.
class TransportTest : public ::testing::TestWithParam<TransportKind> {
 protected:
  void SetUp() override;

 private:
  std::optional<UringEnabled> uring_;
};

// Skips the current test with a reason when kernel tests cannot run, or when `transport` needs
// FUSE-over-io_uring and the switch is missing. Use as: RINGFUSE_SKIP_UNLESS_KERNEL(transport);
#define RINGFUSE_SKIP_UNLESS_KERNEL()                                \
  do {                                                               \
    if (auto why = ::ringfuse::testing::WhyKernelTestsCannotRun()) { \
      GTEST_SKIP() << *why;                                          \
    }                                                                \
  } while (false)

// Sets /dev/fuse's permission bits for the guard's life and puts the old ones back, also when
// the test fails.
class DevFuseModeGuard {
 public:
  explicit DevFuseModeGuard(mode_t mode) {
    struct stat attributes {};
    if (::stat(internal::kDevFusePath, &attributes) != 0) return;
    old_mode_ = attributes.st_mode & 07777;
    changed_ = ::chmod(internal::kDevFusePath, mode) == 0;
  }
  DevFuseModeGuard(const DevFuseModeGuard&) = delete;
  DevFuseModeGuard& operator=(const DevFuseModeGuard&) = delete;
  ~DevFuseModeGuard() {
    if (changed_) ::chmod(internal::kDevFusePath, old_mode_);
  }
  bool changed() const { return changed_; }

 private:
  mode_t old_mode_ = 0;
  bool changed_ = false;
};

}  // namespace ringfuse::testing
