#include "tests/transport/kernel_fixture.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <future>
#include <thread>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "ringfuse/protocol/frames.h"

namespace ringfuse::testing {

std::string TransportTestName(const ::testing::TestParamInfo<TransportKind>& param_info) {
  switch (param_info.param) {
    case TransportKind::kThreads: return "Threads";
    case TransportKind::kUring: return "Uring";
    case TransportKind::kUringCmd: return "UringCmd";
    case TransportKind::kAuto: return "Auto";
  }
  return "Unknown";
}

std::optional<std::string> WhyKernelTestsCannotRun() {
  if (::geteuid() != 0) return "kernel tests mount FUSE filesystems and need root";
  if (::access("/dev/fuse", R_OK | W_OK) != 0) {
    return absl::StrFormat("/dev/fuse is not usable: %s", std::strerror(errno));
  }
  return std::nullopt;
}

UringEnabled::UringEnabled() {
  if (absl::Status on = switch_.TurnOn(); !on.ok()) reason_ = std::string(on.message());
}

void TransportTest::SetUp() {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  if (GetParam() == TransportKind::kUringCmd) {
    uring_.emplace();
    if (!uring_->ok()) GTEST_SKIP() << uring_->reason();
  }
}

absl::StatusOr<std::unique_ptr<ServedMount>> ServedMount::Start(Handler& handler,
                                                                TransportKind transport,
                                                                SessionOptions options) {
  std::unique_ptr<ServedMount> mount(new ServedMount);
  char dir_template[] = "/tmp/ringfuse-test.XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) {
    return absl::InternalError(absl::StrFormat("mkdtemp: %s", std::strerror(errno)));
  }
  mount->root_ = dir_template;
  options.mount.mountpoint = mount->root_;
  options.transport = transport;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Start(options, handler);
  if (!session.ok()) {
    ::rmdir(mount->root_.c_str());
    mount->root_.clear();
    return session.status();
  }
  mount->session_ = std::move(*session);
  mount->connection_id_ = mount->session_->connection_id();
  mount->watchdog_ = std::thread(&ServedMount::Watch, mount.get());
  return mount;
}

void ServedMount::Watch() {
  std::unique_lock lock(watchdog_mutex_);
  if (watchdog_wake_.wait_for(lock, kWatchdogBound, [this] { return ending_; })) return;
  ADD_FAILURE() << "the mount outlived " << kWatchdogBound.count()
                << " s: aborting its connection so that nothing hangs";
  (void)AbortConnection(connection_id_);
}

long ServedMount::StopAndJoin() {
  if (joined_) return 0;
  const auto start = std::chrono::steady_clock::now();
  session_->Stop();
  const bool ended = WaitsForEnd(*session_, kStopBound);
  joined_ = ended;
  if (!ended) return -1;
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - start)
                               .count());
}

bool WaitsForEnd(Session& session, std::chrono::milliseconds bound) {
  std::packaged_task<void()> wait([&session] { session.Wait(); });
  std::future<void> done = wait.get_future();
  std::thread waiter(std::move(wait));
  const bool ended = done.wait_for(bound) == std::future_status::ready;
  if (!ended) {
    // Do not leave a hung mount behind: end the connection, then the wait can finish.
    (void)AbortConnection(session.connection_id());
  }
  waiter.join();
  return ended;
}

ServedMount::~ServedMount() {
  if (watchdog_.joinable()) {
    {
      std::lock_guard lock(watchdog_mutex_);
      ending_ = true;
    }
    watchdog_wake_.notify_all();
    watchdog_.join();
  }
  if (session_) {
    if (StopAndJoin() < 0) {
      ADD_FAILURE() << "the session did not stop within " << kStopBound.count() << " s";
    }
    session_.reset();
  }
  if (!root_.empty()) ::rmdir(root_.c_str());
}

}  // namespace ringfuse::testing
