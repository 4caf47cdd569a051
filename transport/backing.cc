#include "ringfuse/backing.h"

#include <utility>

#include "transport/backing_connection.h"
#include "transport/dev_fuse.h"

namespace ringfuse::internal {

absl::Status BindBacking(BackingConnection& backing, int dev_fd, bool passthrough) {
  absl::MutexLock lock(&backing.mutex);
  if (backing.dev_fd >= 0) {
    return absl::FailedPreconditionError(
        "SessionOptions::backing_files serves another session: each session needs its own");
  }
  ++backing.session;
  backing.dev_fd = dev_fd;
  backing.passthrough = passthrough;
  return absl::OkStatus();
}

void UnbindBacking(BackingConnection& backing) {
  absl::MutexLock lock(&backing.mutex);
  backing.dev_fd = -1;
}

}  // namespace ringfuse::internal

namespace ringfuse {

BackingFile::BackingFile(std::shared_ptr<internal::BackingConnection> connection, uint64_t session,
                         int32_t id)
    : connection_(std::move(connection)), session_(session), id_(id) {}

BackingFile::~BackingFile() { (void)Close(); }

BackingFile::BackingFile(BackingFile&& other) noexcept
    : connection_(std::move(other.connection_)),
      session_(other.session_),
      id_(std::exchange(other.id_, -1)) {}

BackingFile& BackingFile::operator=(BackingFile&& other) noexcept {
  if (this != &other) {
    (void)Close();
    connection_ = std::move(other.connection_);
    session_ = other.session_;
    id_ = std::exchange(other.id_, -1);
  }
  return *this;
}

absl::Status BackingFile::Close() {
  if (id_ < 0) return absl::OkStatus();
  const int32_t id = std::exchange(id_, -1);
  const std::shared_ptr<internal::BackingConnection> connection = std::move(connection_);
  absl::ReaderMutexLock lock(&connection->mutex);
  // An ended connection took its registrations with it.
  if (connection->dev_fd < 0 || connection->session != session_) return absl::OkStatus();
  return internal::CloseBacking(connection->dev_fd, id);
}

BackingFiles::BackingFiles() : connection_(std::make_shared<internal::BackingConnection>()) {}

BackingFiles::~BackingFiles() = default;

absl::StatusOr<BackingFile> BackingFiles::Open(int fd) const {
  absl::ReaderMutexLock lock(&connection_->mutex);
  if (connection_->dev_fd < 0) {
    return absl::FailedPreconditionError(
        "kernel passthrough: no session serves these backing files (give them to "
        "SessionOptions::backing_files; they work from INIT to the session's end)");
  }
  // The kernel answers EPERM for this as for a missing CAP_SYS_ADMIN: told apart here.
  if (!connection_->passthrough) {
    return absl::FailedPreconditionError(
        "kernel passthrough was not agreed at INIT: ask for wire::init_flag::kPassthrough in "
        "InitWishes (the kernel needs Linux 6.9+ with CONFIG_FUSE_PASSTHROUGH)");
  }
  absl::StatusOr<int32_t> id = internal::OpenBacking(connection_->dev_fd, fd);
  if (!id.ok()) return id.status();
  return BackingFile(connection_, connection_->session, *id);
}

absl::StatusOr<BackingFile> BackingFiles::Adopt(int32_t id) const {
  if (id < 0) return absl::InvalidArgumentError("a backing id is never negative");
  absl::ReaderMutexLock lock(&connection_->mutex);
  if (connection_->dev_fd < 0) {
    return absl::FailedPreconditionError(
        "kernel passthrough: no session serves these backing files, so no id can be adopted");
  }
  return BackingFile(connection_, connection_->session, id);
}

}  // namespace ringfuse
