/// @file
/// Kernel passthrough (FUSE_PASSTHROUGH, protocol 7.40, Linux 6.9): a file the server registers
/// as the backing file of an open, so that the kernel reads and writes it itself and the server
/// sees no READ or WRITE for that open.
///
/// A handler owns a BackingFiles and gives it to SessionOptions::backing_files; from INIT on, the
/// session has bound it to its connection, so OPEN and CREATE can use it from the first request:
///
/// @code
///   absl::StatusOr<BackingFile> backing = backing_files.Open(fd);
///   if (!backing.ok()) return ServeItMyself(reply);
///   reply.Ok(MakeOpenOut(fh, wire::kFopenPassthrough, backing->id()));
///   // keep *backing with the inode until its last RELEASE
/// @endcode
///
/// The kernel allows one backing file per inode at a time (a second makes the open fail with
/// EIO), so the opens of one inode share one BackingFile. Registering needs CAP_SYS_ADMIN and
/// InitWishes::flags with wire::init_flag::kPassthrough agreed at INIT.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "ringfuse/export.h"

// Declared outside the public region: the internals keep hidden visibility.
namespace ringfuse::internal {
class SessionImpl;
struct BackingConnection;
}  // namespace ringfuse::internal

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// One registered backing file: its id goes into fuse_open_out (MakeOpenOut's backing_id), and
/// the registration is closed when the handle is destroyed. Move-only. A handle that outlives
/// its session closes nothing: the kernel dropped the registration with the connection.
class BackingFile {
 public:
  /// Registers nothing.
  BackingFile() = default;
  ~BackingFile();
  /// Takes over `other`'s registration; `other` then registers nothing.
  BackingFile(BackingFile&& other) noexcept;
  /// Closes this handle's registration, then takes over `other`'s.
  BackingFile& operator=(BackingFile&& other) noexcept;
  BackingFile(const BackingFile&) = delete;
  BackingFile& operator=(const BackingFile&) = delete;

  /// The id for MakeOpenOut, or -1 for a handle that registers nothing.
  int32_t id() const { return id_; }
  /// Closes the registration now (FUSE_DEV_IOC_BACKING_CLOSE) and reports how that went; the
  /// handle then registers nothing. Opens already answered with the id keep the file.
  absl::Status Close();

 private:
  friend class BackingFiles;
  BackingFile(std::shared_ptr<internal::BackingConnection> connection, uint64_t session,
              int32_t id);

  std::shared_ptr<internal::BackingConnection> connection_;
  uint64_t session_ = 0;
  int32_t id_ = -1;
};

/// Registers backing files on the connection of the session it is given to (through
/// SessionOptions::backing_files), one session at a time. Safe to use from any thread.
class BackingFiles {
 public:
  BackingFiles();
  ~BackingFiles();
  BackingFiles(const BackingFiles&) = delete;
  BackingFiles& operator=(const BackingFiles&) = delete;

  /// Registers `fd` (FUSE_DEV_IOC_BACKING_OPEN); the kernel keeps its own reference, so the
  /// caller may close `fd` at once. FailedPrecondition outside a session (before its INIT,
  /// after its end) or when INIT did not agree on kernel passthrough; PermissionDenied without
  /// CAP_SYS_ADMIN.
  absl::StatusOr<BackingFile> Open(int fd) const;
  /// Takes on the registration `id` that another process made on this connection and handed
  /// over with it (handover.h): in Session::TakeOver's restore, for the ids the old process's
  /// BackingFiles still held. The handle closes it as one from Open would. FailedPrecondition
  /// outside a session, InvalidArgument for a negative id. The kernel cannot be asked whether
  /// the id is registered: one that is not makes the opens answered with it fail with EIO.
  absl::StatusOr<BackingFile> Adopt(int32_t id) const;

 private:
  friend class internal::SessionImpl;

  std::shared_ptr<internal::BackingConnection> connection_;
};

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
