// The filesystem interface: one virtual per operation, each answering ENOSYS until overridden.
//
// Lifetimes: the views in a request's arguments (names, write data) and its RequestContext are
// valid only until the handler returns: the transport reuses the buffer for the next request.
// A handler may keep the reply (it owns no request memory) and answer later from any thread;
// it copies whatever else it needs.
#pragma once

#include <atomic>
#include <cerrno>

#include "ringfuse/export.h"
#include "ringfuse/init.h"
#include "ringfuse/reply.h"
#include "ringfuse/request.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

struct RequestContext {
  const wire::InHeader& header;
  const Extensions& extensions;
  // Set by the transport when the kernel sends INTERRUPT for this request; null if never.
  const std::atomic<bool>* interrupted = nullptr;

  uint64_t nodeid() const { return header.nodeid; }
  uint32_t uid() const { return header.uid; }
  uint32_t gid() const { return header.gid; }
  uint32_t pid() const { return header.pid; }
  bool Interrupted() const {
    return interrupted != nullptr && interrupted->load(std::memory_order_relaxed);
  }
};

// Every operation that is answered, with the typed reply it is answered through. The dispatcher
// and the Handler's defaults are both generated from this list.
#define RINGFUSE_FOR_EACH_REPLYING_OP(X) \
  X(Lookup, EntryReply)                  \
  X(Getattr, AttrReply)                  \
  X(Setattr, AttrReply)                  \
  X(Readlink, DataReply)                 \
  X(Symlink, EntryReply)                 \
  X(Mknod, EntryReply)                   \
  X(Mkdir, EntryReply)                   \
  X(Unlink, EmptyReply)                  \
  X(Rmdir, EmptyReply)                   \
  X(Rename, EmptyReply)                  \
  X(Link, EntryReply)                    \
  X(Open, OpenReply)                     \
  X(Read, DataReply)                     \
  X(Write, CountReply)                   \
  X(Statfs, StatfsReply)                 \
  X(Release, EmptyReply)                 \
  X(Fsync, EmptyReply)                   \
  X(Setxattr, EmptyReply)                \
  X(Getxattr, XattrReply)                \
  X(Listxattr, XattrReply)               \
  X(Removexattr, EmptyReply)             \
  X(Flush, EmptyReply)                   \
  X(Opendir, OpenReply)                  \
  X(Readdir, DataReply)                  \
  X(Releasedir, EmptyReply)              \
  X(Fsyncdir, EmptyReply)                \
  X(Getlk, LockReply)                    \
  X(Setlk, EmptyReply)                   \
  X(Access, EmptyReply)                  \
  X(Create, CreateReply)                 \
  X(Bmap, BmapReply)                     \
  X(Ioctl, IoctlReply)                   \
  X(Poll, PollReply)                     \
  X(Fallocate, EmptyReply)               \
  X(Readdirplus, DataReply)              \
  X(Lseek, LseekReply)                   \
  X(CopyFileRange, CountReply)           \
  X(SetupMapping, EmptyReply)            \
  X(RemoveMapping, EmptyReply)           \
  X(Syncfs, EmptyReply)                  \
  X(Tmpfile, CreateReply)                \
  X(Statx, StatxReply)

class Handler {
 public:
  virtual ~Handler() = default;

  // INIT succeeded; called before the reply goes to the kernel, so before any other request.
  virtual void Init(const Negotiated& /*negotiated*/) {}
  // The kernel is unmounting (DESTROY); the reply is sent after this returns.
  virtual void Destroy() {}

#define RINGFUSE_DECLARE_HANDLER(Name, ReplyType)                                \
  virtual void Name(const RequestContext& /*context*/, const op::Name& /*args*/, \
                    ReplyType reply) {                                           \
    reply.Error(ENOSYS);                                                         \
  }
  RINGFUSE_FOR_EACH_REPLYING_OP(RINGFUSE_DECLARE_HANDLER)
#undef RINGFUSE_DECLARE_HANDLER

  // Operations the kernel expects no answer to.
  virtual void Forget(const RequestContext& /*context*/, const op::Forget& /*args*/) {}
  virtual void BatchForget(const RequestContext& /*context*/, const op::BatchForget& /*args*/) {}
  // The kernel asks to interrupt the request whose unique is args.in.unique.
  virtual void Interrupt(const RequestContext& /*context*/, const op::Interrupt& /*args*/) {}
  // The kernel's answer to a RETRIEVE notification; header.unique is the notify_unique sent.
  virtual void NotifyReply(const RequestContext& /*context*/, const op::NotifyReply& /*args*/) {}
};

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
