#include <fcntl.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/deadline.h"
#include "base/errno_status.h"
#include "ringfuse/wire.h"
#include "transport/session_impl.h"
#include "transport/sync_init_thread.h"

namespace ringfuse {
namespace {

constexpr const char* kEnableUringHint =
    "; the uring-cmd transport needs FUSE-over-io_uring (Linux 6.14+), switched on with "
    "`echo Y > /sys/module/fuse/parameters/enable_uring`";
// How long Stop lets the connection end by itself after the unmount before aborting it.
constexpr absl::Duration kGraceAfterUnmount = absl::Milliseconds(200);

// The transport INIT must prepare for. Wishing for io_uring commits us to it: once agreed, the
// kernel holds every request until each CPU has a ring queue, so only auto and uring-cmd ask.
InitWishes WishesFor(TransportKind kind, InitWishes wishes) {
  wishes.flags &= ~wire::init_flag::kOverIoUring;
  wishes.required_flags &= ~wire::init_flag::kOverIoUring;
  if (kind == TransportKind::kAuto) wishes.flags |= wire::init_flag::kOverIoUring;
  if (kind == TransportKind::kUringCmd) wishes.required_flags |= wire::init_flag::kOverIoUring;
  return wishes;
}

TransportKind Resolve(TransportKind asked, const Negotiated& negotiated) {
  if (asked != TransportKind::kAuto) return asked;
  return negotiated.io_uring ? TransportKind::kUringCmd : TransportKind::kUring;
}

std::string WhyChosen(TransportKind asked, const Negotiated& negotiated) {
  if (asked != TransportKind::kAuto) return "asked for explicitly";
  return negotiated.io_uring
             ? "the kernel offers FUSE-over-io_uring"
             : "the kernel does not offer FUSE-over-io_uring (enable_uring is off or the kernel "
               "predates 7.42)";
}

absl::Status WithUringHint(const absl::Status& status, TransportKind kind) {
  if (kind != TransportKind::kUringCmd) return status;
  return absl::Status(status.code(), absl::StrCat(status.message(), kEnableUringHint));
}

// The kernel serves the connection until it is unmounted or aborted; then /dev/fuse polls
// POLLERR. (Whether our workers still run says nothing: the uring transport's end at Stop.)
bool ConnectionAlive(int dev_fd) {
  pollfd check{dev_fd, POLLIN, 0};
  return ::poll(&check, 1, 0) >= 0 && (check.revents & (POLLERR | POLLNVAL)) == 0;
}

}  // namespace

absl::Status AbortConnection(uint32_t connection_id) {
  if (absl::Status fusectl = internal::MountFusectlIfMissing(); !fusectl.ok()) return fusectl;
  const std::string path = absl::StrFormat("%s/%u/abort", internal::kFusectlPath, connection_id);
  base::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) {
    // ENOENT: the connection is already gone, which is what we wanted.
    if (errno == ENOENT) return absl::OkStatus();
    return base::ErrnoStatus(errno, absl::StrFormat("cannot open %s", path));
  }
  if (::write(fd.get(), "1", 1) != 1) return base::ErrnoStatus(errno, "cannot abort " + path);
  return absl::OkStatus();
}

internal::SessionImpl::SessionImpl(int dev_fd, Handler& handler, const InitWishes& wishes)
    : init_channel_(dev_fd), dispatcher_(handler, init_channel_, diagnostics_, wishes) {}

absl::StatusOr<std::unique_ptr<internal::SessionImpl>> internal::SessionImpl::Start(
    const SessionOptions& options, Handler& handler) {
  absl::StatusOr<std::unique_ptr<internal::SessionImpl>> agreed = MountAndInit(options, handler);
  if (!agreed.ok()) return agreed.status();
  std::unique_ptr<internal::SessionImpl> session = std::move(*agreed);
  if (absl::Status status = session->StartTransport(options); !status.ok()) {
    session->Stop();
    return status;
  }
  return session;
}

absl::StatusOr<std::unique_ptr<internal::SessionImpl>> internal::SessionImpl::MountAndInit(
    const SessionOptions& options, Handler& handler) {
  absl::StatusOr<std::unique_ptr<internal::SessionImpl>> mounted =
      MountWithSession(options, handler);
  if (!mounted.ok()) return mounted.status();
  std::unique_ptr<internal::SessionImpl> session = std::move(*mounted);
  if (absl::Status status = options.mount.sync_init ? session->CheckInit(options.backing_files)
                                                    : session->ServeInit(options);
      !status.ok()) {
    return WithUringHint(status, options.transport);
  }
  return session;
}

absl::StatusOr<std::unique_ptr<internal::SessionImpl>> internal::SessionImpl::MountWithSession(
    const SessionOptions& options, Handler& handler) {
  std::unique_ptr<internal::SessionImpl> session;
  std::unique_ptr<internal::SyncInitThread> init_thread;
  if (options.mount.sync_init) {
    absl::StatusOr<std::unique_ptr<internal::SyncInitThread>> started =
        internal::SyncInitThread::Start([&session](ConstBytes init) {
          session->dispatcher_.Dispatch(init, internal::Delivery{});
        });
    if (!started.ok()) return started.status();
    init_thread = std::move(*started);
  }
  const InitWishes wishes = WishesFor(options.transport, options.init);
  absl::StatusOr<internal::Mount> mount = internal::Mount::Create(
      options.mount,
      [&](int dev_fd) {
        session.reset(new internal::SessionImpl(dev_fd, handler, wishes));
        session->dispatcher_.set_observer(options.observer);
        if (init_thread) init_thread->Serve(dev_fd);
      },
      [&](bool mounted) {
        if (init_thread) init_thread->Join(mounted);
      });
  if (!mount.ok()) {
    // The kernel's errno for a refused INIT says less than the dispatcher did.
    if (session != nullptr &&
        session->dispatcher_.state() == internal::ConnectionState::kInitFailed) {
      return WithUringHint(
          absl::FailedPreconditionError(absl::StrFormat(
              "INIT with the kernel failed, so nothing was mounted on %s: %s (%s)",
              options.mount.mountpoint, session->diagnostics_.last(), mount.status().message())),
          options.transport);
    }
    return mount.status();
  }
  session->mount_.emplace(std::move(*mount));
  return session;
}

absl::Status internal::SessionImpl::ServeInit(const SessionOptions& options) {
  const absl::Duration timeout = options.init_timeout;
  const int fd = mount_->dev_fd();
  pollfd wait{fd, POLLIN, 0};
  const int ready = ::poll(&wait, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout)));
  if (ready <= 0) {
    return absl::DeadlineExceededError(
        absl::StrFormat("the kernel sent no INIT within %s after mounting %s",
                        absl::FormatDuration(timeout), mount_->mountpoint()));
  }
  // INIT is small, but the kernel refuses reads shorter than its minimum buffer.
  std::vector<std::byte> buffer(wire::kMinReadBuffer * 2);
  const ssize_t length = ::read(fd, buffer.data(), buffer.size());
  if (length < 0) return base::ErrnoStatus(errno, "reading INIT from /dev/fuse failed");
  dispatcher_.Dispatch(ConstBytes(buffer.data(), static_cast<size_t>(length)),
                       internal::Delivery{});
  return CheckInit(options.backing_files);
}

absl::Status internal::SessionImpl::CheckInit(BackingFiles* backing_files) {
  if (dispatcher_.state() != internal::ConnectionState::kRunning) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "INIT with the kernel failed for %s: %s", mount_->mountpoint(), diagnostics_.last()));
  }
  notifier_ = std::make_unique<Notifier>(mount_->dev_fd(), dispatcher_.negotiated());
  dispatcher_.set_notify_reply_sink(notifier_.get());
  if (backing_files == nullptr) return absl::OkStatus();
  if (absl::Status bound =
          internal::BindBacking(*backing_files->connection_, mount_->dev_fd(),
                                dispatcher_.negotiated().Has(wire::init_flag::kPassthrough));
      !bound.ok()) {
    return bound;
  }
  backing_ = backing_files->connection_;
  return absl::OkStatus();
}

absl::Status internal::SessionImpl::StartTransport(const SessionOptions& options) {
  const Negotiated& negotiated = dispatcher_.negotiated();
  const TransportKind kind = Resolve(options.transport, negotiated);
  if (adopted_rings_ && kind != TransportKind::kUringCmd) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the old process served %s over uring-cmd, and its ring entries hold requests that only "
        "rings can answer: take it over with the uring-cmd (or auto) transport, not %s",
        mount_->mountpoint(), TransportName(kind)));
  }
  absl::StatusOr<std::unique_ptr<internal::Transport>> transport = internal::MakeTransport(
      kind, internal::TransportContext{mount_->dev_fd(), dispatcher_, negotiated,
                                       options.transport_options, mount_->mountpoint(),
                                       adopted_rings_ ? &*adopted_rings_ : nullptr});
  adopted_rings_.reset();
  if (!transport.ok()) return transport.status();
  serving_options_ = options;
  kind_ = kind;
  {
    std::lock_guard lock(serving_mutex_);
    transport_ = std::move(*transport);
  }
  // Before Start: from then on the transport's threads dispatch, and the dispatcher is theirs.
  dispatcher_.set_interrupt_sink(&transport_->interrupt_sink());
  if (absl::Status status = transport_->Start(); !status.ok()) return status;
  transport_choice_ = absl::StrFormat(
      "serving %s over the %s transport (%s): %s", mount_->mountpoint(), TransportName(kind),
      WhyChosen(options.transport, negotiated), transport_->Describe());
  LogLine(LogLevel::kInfo, transport_choice_);
  return absl::OkStatus();
}

void internal::SessionImpl::Wait() {
  // call_once holds every other caller until the first has joined the threads.
  std::call_once(join_once_, [this] {
    std::unique_lock lock(serving_mutex_);
    std::shared_ptr<Transport> serving = transport_;
    while (serving) {
      lock.unlock();
      serving->Join();
      lock.lock();
      // A handover pauses the transport: its end then says nothing until the handover is over.
      serving_changed_.wait(lock, [this] { return !pausing_; });
      if (transport_ == serving) break;  // ended by itself or by Stop
      serving = transport_;              // resumed on another, or none once handed over
    }
    aborted_ = !stopping_ && !handed_over_ && mount_ && mount_->StillMounted();
  });
}

void internal::SessionImpl::Stop() {
  std::call_once(stop_once_, [this] {
    stopping_ = true;
    {
      std::lock_guard lock(serving_mutex_);
      if (transport_) transport_->Stop();
      if (handed_over_) return;  // the mount is another process's now
    }
    if (!mount_) return;  // the mount failed: nothing to end
    const uint32_t connection = mount_->connection_id();
    if (mount_->mounted()) {
      if (absl::Status status = mount_->Unmount(/*lazy=*/true); !status.ok()) {
        Log(LogLevel::kWarning, "%s", status.ToString());
      }
    }
    // A lazy unmount leaves the connection alive while clients hold files open; then end it.
    // Only while it is alive: once it has ended the id may already name another filesystem's
    // connection.
    const base::Deadline grace(kGraceAfterUnmount);
    while (ConnectionAlive(mount_->dev_fd()) && !grace.passed()) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    if (ConnectionAlive(mount_->dev_fd())) {
      if (absl::Status status = AbortConnection(connection); !status.ok()) {
        Log(LogLevel::kWarning, "%s", status.ToString());
      }
    }
  });
}

internal::SessionImpl::~SessionImpl() {
  Stop();
  Wait();
  if (backing_) internal::UnbindBacking(*backing_);
}

absl::StatusOr<std::unique_ptr<Session>> Session::TakeOver(int socket,
                                                           const SessionOptions& options,
                                                           Handler& handler,
                                                           const RestoreFromHandover& restore) {
  absl::StatusOr<std::unique_ptr<internal::SessionImpl>> impl =
      internal::SessionImpl::TakeOver(socket, options, handler, restore);
  if (!impl.ok()) return impl.status();
  return std::unique_ptr<Session>(new Session(std::move(*impl)));
}

absl::StatusOr<HandoverReport> Session::HandOver(int socket, const SaveForHandover& save,
                                                 const HandoverOptions& options) {
  return impl_->HandOver(socket, save, options);
}

absl::StatusOr<std::unique_ptr<Session>> Session::Start(const SessionOptions& options,
                                                        Handler& handler) {
  absl::StatusOr<std::unique_ptr<internal::SessionImpl>> impl =
      internal::SessionImpl::Start(options, handler);
  if (!impl.ok()) return impl.status();
  return std::unique_ptr<Session>(new Session(std::move(*impl)));
}

Session::Session(std::unique_ptr<internal::SessionImpl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;
void Session::Wait() { impl_->Wait(); }
void Session::Stop() { impl_->Stop(); }
bool Session::aborted() const { return impl_->aborted(); }
TransportKind Session::transport_kind() const { return impl_->transport_kind(); }
const std::string& Session::transport_choice() const { return impl_->transport_choice(); }
const Negotiated& Session::negotiated() const { return impl_->negotiated(); }
const std::string& Session::mountpoint() const { return impl_->mount().mountpoint(); }
uint32_t Session::connection_id() const { return impl_->mount().connection_id(); }
int Session::dev_fd() const { return impl_->dev_fd(); }
Notifier& Session::notifier() { return impl_->notifier(); }
absl::Status Session::UpdateKeptNote(std::string_view note) { return impl_->UpdateKeptNote(note); }
uint32_t Session::incarnation() const { return impl_->incarnation(); }

absl::StatusOr<std::unique_ptr<Session>> Session::StartKept(int keeper_socket,
                                                            const SessionOptions& options,
                                                            Handler& handler,
                                                            const RecoverAfterCrash& recover,
                                                            const std::vector<int>& kept_fds) {
  absl::StatusOr<std::unique_ptr<internal::SessionImpl>> impl = internal::SessionImpl::StartKept(
      base::UniqueFd(keeper_socket), options, handler, recover, kept_fds);
  if (!impl.ok()) return impl.status();
  return std::unique_ptr<Session>(new Session(std::move(*impl)));
}

}  // namespace ringfuse
