/// \file
/// The filesystem interface: one virtual per operation, each answering ENOSYS until overridden.
///
/// Lifetimes: the views in a request's arguments (names, write data) and its RequestContext are
/// valid only until the handler returns: the transport reuses the buffer for the next request.
/// A handler may keep the reply (it owns no request memory) and answer later from any thread;
/// it copies whatever else it needs. On the uring-cmd transport a request answered late holds a
/// ring entry of its CPU's queue until answered: see kMaxLateRequestsPerQueue.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstddef>

#include "ringfuse/export.h"
#include "ringfuse/init.h"
#include "ringfuse/reply.h"
#include "ringfuse/request.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// How many requests of one uring-cmd queue (one CPU's) may wait for a late answer at once while
/// that CPU's other requests are still served: each holds one of the queue's ring entries, and
/// the transport keeps the rest for new requests. Past it, requests from that CPU wait in the
/// kernel until one is answered, so a handler that may hold many requests unanswered (blocking
/// locks, say) bounds them below it. The threads and uring transports hold nothing for a late
/// answer.
inline constexpr size_t kMaxLateRequestsPerQueue = 960;

/// Who asks, about which node: the request's header, its extensions and its interrupt flag.
struct RequestContext {
  const wire::InHeader& header;  ///< the request's fuse_in_header
  const Extensions& extensions;  ///< the request's extensions (security contexts, groups)
  /// Set by the transport when the kernel sends INTERRUPT for this request; null if never.
  const std::atomic<bool>* interrupted = nullptr;

  uint64_t nodeid() const { return header.nodeid; }  ///< the node the request is about
  uint32_t uid() const { return header.uid; }        ///< the caller's filesystem uid
  uint32_t gid() const { return header.gid; }        ///< the caller's filesystem gid
  uint32_t pid() const { return header.pid; }        ///< the caller's thread group id
  /// Whether the kernel has sent INTERRUPT for this request.
  bool Interrupted() const {
    return interrupted != nullptr && interrupted->load(std::memory_order_relaxed);
  }
};

/// The filesystem: override the operations it serves (see the file's description).
class Handler {
 public:
  virtual ~Handler() = default;

  /// INIT succeeded; called before the reply goes to the kernel, so before any other request.
  virtual void Init(const Negotiated& /*negotiated*/) {}
  /// The kernel is unmounting (DESTROY); the reply is sent after this returns.
  virtual void Destroy() {}

  // Every operation the kernel expects an answer to, in opcode order; each answers ENOSYS until
  // overridden (for FLUSH, ACCESS, ... the kernel then stops asking).

  /// Finds `args.name` in directory `context.nodeid()`: an entry (node id, attributes,
  /// cache timeouts), a negative entry (node id 0) to cache the absence, or ENOENT.
  virtual void Lookup(const RequestContext& /*context*/, const op::Lookup& /*args*/,
                      EntryReply reply) {
    reply.Error(ENOSYS);
  }
  /// Attributes of `context.nodeid()`; `args.fh()` names the open file when the kernel
  /// has one.
  virtual void Getattr(const RequestContext& /*context*/, const op::Getattr& /*args*/,
                       AttrReply reply) {
    reply.Error(ENOSYS);
  }
  /// Changes the attributes whose accessors are set (`args.mode()`, `args.size()`,
  /// `args.mtime()`...) and answers the attributes that result.
  virtual void Setattr(const RequestContext& /*context*/, const op::Setattr& /*args*/,
                       AttrReply reply) {
    reply.Error(ENOSYS);
  }
  /// The target of symlink `context.nodeid()`, as bytes.
  virtual void Readlink(const RequestContext& /*context*/, const op::Readlink& /*args*/,
                        DataReply reply) {
    reply.Error(ENOSYS);
  }
  /// Creates symlink `args.name` in `context.nodeid()` pointing to `args.target`.
  virtual void Symlink(const RequestContext& /*context*/, const op::Symlink& /*args*/,
                       EntryReply reply) {
    reply.Error(ENOSYS);
  }
  /// Creates a device, FIFO, socket or regular file `args.name` with `args.mode()` and
  /// `args.rdev()`.
  virtual void Mknod(const RequestContext& /*context*/, const op::Mknod& /*args*/,
                     EntryReply reply) {
    reply.Error(ENOSYS);
  }
  /// Creates directory `args.name` in `context.nodeid()` with `args.mode()` and `args.umask()`.
  virtual void Mkdir(const RequestContext& /*context*/, const op::Mkdir& /*args*/,
                     EntryReply reply) {
    reply.Error(ENOSYS);
  }
  /// Removes the non-directory `args.name` from `context.nodeid()`.
  virtual void Unlink(const RequestContext& /*context*/, const op::Unlink& /*args*/,
                      EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// Removes the empty directory `args.name` from `context.nodeid()`.
  virtual void Rmdir(const RequestContext& /*context*/, const op::Rmdir& /*args*/,
                     EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// Moves `args.old_name` in `context.nodeid()` to `args.new_name` in `args.newdir`;
  /// `args.flags` carries RENAME_NOREPLACE, RENAME_EXCHANGE or RENAME_WHITEOUT (RENAME2).
  virtual void Rename(const RequestContext& /*context*/, const op::Rename& /*args*/,
                      EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// Makes a hard link `args.new_name` in `context.nodeid()` to node `args.oldnodeid()`.
  virtual void Link(const RequestContext& /*context*/, const op::Link& /*args*/, EntryReply reply) {
    reply.Error(ENOSYS);
  }
  /// Opens file `context.nodeid()` with `args.flags()`; answers the fh that later requests
  /// carry and FOPEN_* flags (wire::kFopen*).
  virtual void Open(const RequestContext& /*context*/, const op::Open& /*args*/, OpenReply reply) {
    reply.Error(ENOSYS);
  }
  /// Up to `args.size()` bytes at `args.offset()` of open file `args.fh()`; fewer bytes
  /// mean end of file (unless FOPEN_DIRECT_IO).
  virtual void Read(const RequestContext& /*context*/, const op::Read& /*args*/, DataReply reply) {
    reply.Error(ENOSYS);
  }
  /// Writes `args.data` at `args.offset()` of open file `args.fh()`; answers how many bytes
  /// were written.
  virtual void Write(const RequestContext& /*context*/, const op::Write& /*args*/,
                     CountReply reply) {
    reply.Error(ENOSYS);
  }
  /// Filesystem statistics (statfs(2), df).
  virtual void Statfs(const RequestContext& /*context*/, const op::Statfs& /*args*/,
                      StatfsReply reply) {
    reply.Error(ENOSYS);
  }
  /// The last close of open file `args.fh()`; the fh is free to reuse after the reply.
  virtual void Release(const RequestContext& /*context*/, const op::Release& /*args*/,
                       EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// Flushes open file `args.fh()` to stable storage (data only with `args.datasync()`).
  virtual void Fsync(const RequestContext& /*context*/, const op::Fsync& /*args*/,
                     EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// Sets extended attribute `args.name` to `args.value` (XATTR_CREATE/REPLACE in
  /// args.flags()).
  virtual void Setxattr(const RequestContext& /*context*/, const op::Setxattr& /*args*/,
                        EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// The value of extended attribute `args.name`: its size when `args.size()` is 0, else
  /// the value (ERANGE if larger than args.size()).
  virtual void Getxattr(const RequestContext& /*context*/, const op::Getxattr& /*args*/,
                        XattrReply reply) {
    reply.Error(ENOSYS);
  }
  /// The NUL-separated names of the extended attributes, sized as for Getxattr.
  virtual void Listxattr(const RequestContext& /*context*/, const op::Listxattr& /*args*/,
                         XattrReply reply) {
    reply.Error(ENOSYS);
  }
  /// Removes extended attribute `args.name`.
  virtual void Removexattr(const RequestContext& /*context*/, const op::Removexattr& /*args*/,
                           EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// A close(2) of a descriptor of open file `args.fh()` (once per close, not per open);
  /// POSIX locks of `args.lock_owner()` go with it.
  virtual void Flush(const RequestContext& /*context*/, const op::Flush& /*args*/,
                     EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// Opens directory `context.nodeid()`; answers the fh that Readdir and Releasedir carry.
  virtual void Opendir(const RequestContext& /*context*/, const op::Opendir& /*args*/,
                       OpenReply reply) {
    reply.Error(ENOSYS);
  }
  /// Entries of open directory `args.fh()` from cookie `args.offset()`, added to the reply
  /// until it is full (see DirReply); a reply with no entries ends the listing.
  virtual void Readdir(const RequestContext& /*context*/, const op::Readdir& /*args*/,
                       DirReply reply) {
    reply.Error(ENOSYS);
  }
  /// The last close of open directory `args.fh()`.
  virtual void Releasedir(const RequestContext& /*context*/, const op::Releasedir& /*args*/,
                          EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// Flushes open directory `args.fh()` to stable storage.
  virtual void Fsyncdir(const RequestContext& /*context*/, const op::Fsyncdir& /*args*/,
                        EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// Tests for a POSIX lock that would conflict with `args.lock()` (F_GETLK).
  virtual void Getlk(const RequestContext& /*context*/, const op::Getlk& /*args*/,
                     LockReply reply) {
    reply.Error(ENOSYS);
  }
  /// Takes or releases a POSIX or flock lock; `args.wait` is SETLKW: block until granted
  /// (answer EINTR if RequestContext::Interrupted()).
  virtual void Setlk(const RequestContext& /*context*/, const op::Setlk& /*args*/,
                     EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// Checks access `args.mask()` for the caller (access(2)); without default_permissions.
  virtual void Access(const RequestContext& /*context*/, const op::Access& /*args*/,
                      EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// Creates and opens regular file `args.name` in `context.nodeid()`: an entry and an
  /// open fh in one reply.
  virtual void Create(const RequestContext& /*context*/, const op::Create& /*args*/,
                      CreateReply reply) {
    reply.Error(ENOSYS);
  }
  /// Maps block `args.block()` of the file to a device block (fuseblk only).
  virtual void Bmap(const RequestContext& /*context*/, const op::Bmap& /*args*/, BmapReply reply) {
    reply.Error(ENOSYS);
  }
  /// An ioctl(2) on open file `args.fh()`: `args.cmd()` with `args.in_data` in.
  virtual void Ioctl(const RequestContext& /*context*/, const op::Ioctl& /*args*/,
                     IoctlReply reply) {
    reply.Error(ENOSYS);
  }
  /// Which events are ready on open file `args.fh()`; with a handle in args.kernel_handle(),
  /// later readiness is announced with Notifier::Poll.
  virtual void Poll(const RequestContext& /*context*/, const op::Poll& /*args*/, PollReply reply) {
    reply.Error(ENOSYS);
  }
  /// Allocates or punches a range of open file `args.fh()` (fallocate(2) `args.mode()`).
  virtual void Fallocate(const RequestContext& /*context*/, const op::Fallocate& /*args*/,
                         EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// Like Readdir, each entry with its lookup result (see DirPlusReply): each entry other than .
  /// and .. counts as a lookup. Asked for only with kDoReaddirplus in InitWishes.
  virtual void Readdirplus(const RequestContext& /*context*/, const op::Readdirplus& /*args*/,
                           DirPlusReply reply) {
    reply.Error(ENOSYS);
  }
  /// SEEK_DATA or SEEK_HOLE (`args.whence()`) from `args.offset()` of open file `args.fh()`.
  virtual void Lseek(const RequestContext& /*context*/, const op::Lseek& /*args*/,
                     LseekReply reply) {
    reply.Error(ENOSYS);
  }
  /// Copies a range between two open files (copy_file_range(2)); answers the bytes copied.
  virtual void CopyFileRange(const RequestContext& /*context*/, const op::CopyFileRange& /*args*/,
                             CountReply reply) {
    reply.Error(ENOSYS);
  }
  /// DAX: maps a range of the file into the DAX window (virtiofs).
  virtual void SetupMapping(const RequestContext& /*context*/, const op::SetupMapping& /*args*/,
                            EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// DAX: removes mappings from the DAX window (virtiofs).
  virtual void RemoveMapping(const RequestContext& /*context*/, const op::RemoveMapping& /*args*/,
                             EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// Flushes the whole filesystem (syncfs(2)).
  virtual void Syncfs(const RequestContext& /*context*/, const op::Syncfs& /*args*/,
                      EmptyReply reply) {
    reply.Error(ENOSYS);
  }
  /// Creates and opens an unnamed regular file in `context.nodeid()` (O_TMPFILE).
  virtual void Tmpfile(const RequestContext& /*context*/, const op::Tmpfile& /*args*/,
                       CreateReply reply) {
    reply.Error(ENOSYS);
  }
  /// statx(2) of `context.nodeid()`: the fields `args.mask()` asks for.
  virtual void Statx(const RequestContext& /*context*/, const op::Statx& /*args*/,
                     StatxReply reply) {
    reply.Error(ENOSYS);
  }

  // Operations the kernel expects no answer to.

  /// The kernel drops `args.nlookup()` lookups of `context.nodeid()`.
  virtual void Forget(const RequestContext& /*context*/, const op::Forget& /*args*/) {}
  /// Forget for many nodes at once, one (nodeid, nlookup) pair each.
  virtual void BatchForget(const RequestContext& /*context*/, const op::BatchForget& /*args*/) {}
  /// The kernel asks to interrupt the request whose unique is args.unique().
  virtual void Interrupt(const RequestContext& /*context*/, const op::Interrupt& /*args*/) {}
  /// The kernel's answer to a RETRIEVE notification; header.unique is the notify_unique sent.
  virtual void NotifyReply(const RequestContext& /*context*/, const op::NotifyReply& /*args*/) {}
};

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
