// PassthroughFs: POSIX record locks (as OFD locks on a per-owner open, owner_locks.h) and
// flock(2) locks (on the handle's own open), with waits served by the LockWaiter.
#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>
#include <cstdint>
#include <limits>

#include "daemon/access/accountable_user.h"
#include "daemon/fs/passthrough_fs.h"

namespace ringfuse::daemon {
namespace {

constexpr uint64_t kToEndOfFile = std::numeric_limits<int64_t>::max();  // the kernel's OFFSET_MAX

// FUSE ranges are [start, end] with OFFSET_MAX for "to the end"; flock's are start + length,
// 0 meaning to the end.
struct flock FlockOf(const wire::FileLock& lock) {
  struct flock out {};
  out.l_type = static_cast<short>(lock.type);
  out.l_whence = SEEK_SET;
  out.l_start = static_cast<off_t>(lock.start);
  out.l_len = lock.end >= kToEndOfFile ? 0 : static_cast<off_t>(lock.end - lock.start + 1);
  return out;
}

// The pid is the lock's process in the daemon's pid namespace, which the kernel translates for
// the caller; 0 where there is none.
wire::FileLock FileLockOf(const struct flock& lock) {
  wire::FileLock out{};
  out.type = static_cast<uint32_t>(lock.l_type);
  if (lock.l_type == F_UNLCK) return out;
  out.pid = lock.l_pid > 0 ? static_cast<uint32_t>(lock.l_pid) : 0;
  out.start = static_cast<uint64_t>(lock.l_start);
  out.end = lock.l_len == 0 ? kToEndOfFile : static_cast<uint64_t>(lock.l_start + lock.l_len - 1);
  return out;
}

// The lock waiter's "not yet" for every way a lock can be busy.
base::Errno LockResult(base::Errno error) {
  const bool busy = error == base::Errno(EACCES) || error == base::Errno(EWOULDBLOCK);
  return busy ? LockWaiter::kNotYet : error;
}

}  // namespace

void PassthroughFs::Getlk(const RequestContext&, const op::Getlk& args, LockReply reply) {
  const std::shared_ptr<FileHandle> file = open_.File(args.fh());
  if (file == nullptr) return reply.Error(EBADF);
  struct flock lock = FlockOf(args.lock());
  if (const base::Errno error = owner_locks_.Probe(*file, args.lock_owner(), lock); !error.ok()) {
    return reply.Error(error.value());
  }
  reply.Ok(FileLockOf(lock));
}

void PassthroughFs::Setlk(const RequestContext& context, const op::Setlk& args, EmptyReply reply) {
  if (args.flock()) return Flock(context, args, std::move(reply));
  const std::shared_ptr<FileHandle> file = open_.File(args.fh());
  if (file == nullptr) return reply.Error(EBADF);
  const struct flock lock = FlockOf(args.lock());
  if (const base::Errno error = OwnerLocks::CheckAccess(*file, lock.l_type); !error.ok()) {
    return reply.Error(error.value());
  }
  // An owner with no open holds no lock to release: no open is made for nothing.
  if (lock.l_type == F_UNLCK && !owner_locks_.Holds(*file, args.lock_owner())) return reply.Ok();
  // The request, held by a waiting attempt, keeps the owner's open past a FLUSH (owner_locks.h).
  base::ErrnoOr<std::shared_ptr<OwnerLocks::Request>> request =
      owner_locks_.Begin(*file, args.fh(), args.lock_owner(), [&] { return AccountOf(context); });
  if (!request.ok()) return reply.Error(request.error().value());
  auto attempt = [request = *std::move(request), lock, pid = args.lock().pid] {
    return LockResult(request->Set(lock, pid));
  };
  AnswerLock(context, args.wait, std::move(attempt), std::move(reply));
}

void PassthroughFs::Flock(const RequestContext& context, const op::Setlk& args, EmptyReply reply) {
  std::shared_ptr<FileHandle> file = open_.File(args.fh());
  if (file == nullptr) return reply.Error(EBADF);
  const int operation = args.lock().type == F_RDLCK   ? LOCK_SH
                        : args.lock().type == F_WRLCK ? LOCK_EX
                                                      : LOCK_UN;
  // The attempt holds the handle: a wait may outlast the request's RELEASE.
  auto attempt = [file = std::move(file), operation] {
    return LockResult(base::Errno::OfCall(::flock(file->fd(), operation | LOCK_NB)));
  };
  AnswerLock(context, args.wait, std::move(attempt), std::move(reply));
}

void PassthroughFs::AnswerLock(const RequestContext& context, bool wait,
                               LockWaiter::Attempt attempt, EmptyReply reply) {
  const base::Errno error = attempt();
  if (error.ok()) return reply.Ok();
  if (error != LockWaiter::kNotYet || !wait) return reply.Error(error.value());
  lock_waiter_.Wait(context, std::move(attempt), std::move(reply));
}

void PassthroughFs::Interrupt(const RequestContext&, const op::Interrupt& args) {
  lock_waiter_.Interrupt(args.unique());
}

}  // namespace ringfuse::daemon
