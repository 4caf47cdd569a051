// PassthroughFs: extended attributes, reached through /proc/self/fd/N of the node's O_PATH fd
// (the f*xattr calls refuse O_PATH fds), as the caller.
//
// Symlinks are the exception: no call reaches a symlink's own attributes through an fd or a
// magic link without a name, so they are answered as having none (set and remove: EPERM, as
// user.* attributes are refused on symlinks anyway). The privileged namespaces (trusted.*,
// security.*) are checked by the client's kernel against the caller before a request is sent.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <cerrno>
#include <string>

#include "daemon/access/credentials.h"
#include "daemon/fs/backing.h"
#include "daemon/fs/passthrough_fs.h"
#include "daemon/fs/thread_buffer.h"

namespace ringfuse::daemon {
namespace {

// The path to reach a node's attributes by, valid while the inode it names is held open.
struct AttributePath {
  std::shared_ptr<const Inode> inode;
  std::string path;
  const char* c_str() const { return path.c_str(); }
};

// The path to reach the node's attributes by, or the error to answer.
base::ErrnoOr<AttributePath> AttributePathOf(InodeTable& inodes, uint64_t nodeid) {
  base::ErrnoOr<std::shared_ptr<const Inode>> inode = inodes.Get(nodeid);
  if (!inode.ok()) return inode.error();
  struct stat st;
  const int fd = (*inode)->path.get();
  if (::fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) return base::Errno::Last();
  if (S_ISLNK(st.st_mode)) return base::Errno(ENODATA);
  return AttributePath{*std::move(inode), ProcPath(fd)};
}

// The same, for a change: EROFS in read-only mode, EPERM for a symlink.
base::ErrnoOr<AttributePath> ChangeablePathOf(bool read_only, InodeTable& inodes, uint64_t nodeid) {
  if (read_only) return base::Errno(EROFS);
  base::ErrnoOr<AttributePath> path = AttributePathOf(inodes, nodeid);
  if (!path.ok() && path.error() == base::Errno(ENODATA)) return base::Errno(EPERM);
  return path;
}

// GETXATTR and LISTXATTR: `size` 0 asks for the size only; `call(buffer, size)` is the
// backing getxattr or listxattr.
template <typename Call>
void ReplyXattr(uint32_t size, Call call, XattrReply reply) {
  if (size == 0) {
    const base::ErrnoOr<ssize_t> needed = base::ValueOfCall(call(nullptr, 0));
    if (!needed.ok()) return reply.Error(needed.error().value());
    return reply.Size(static_cast<uint32_t>(*needed));
  }
  const MutableBytes buffer = ThreadBuffer(size);
  if (buffer.size() < size) return reply.Error(ENOMEM);
  const base::ErrnoOr<ssize_t> length =
      base::ValueOfCall(call(reinterpret_cast<char*>(buffer.data()), buffer.size()));
  if (!length.ok()) return reply.Error(length.error().value());
  reply.Data(buffer.first(static_cast<size_t>(*length)));
}

}  // namespace

void PassthroughFs::Setxattr(const RequestContext& context, const op::Setxattr& args,
                             EmptyReply reply) {
  const std::string name(args.name);
  ChangeXattr(context, std::move(reply), [&](const char* path) {
    return ::setxattr(path, name.c_str(), args.value.data(), args.value.size(), args.flags());
  });
}

void PassthroughFs::Getxattr(const RequestContext& context, const op::Getxattr& args,
                             XattrReply reply) {
  const base::ErrnoOr<AttributePath> path = AttributePathOf(inodes_, context.nodeid());
  if (!path.ok()) return reply.Error(path.error().value());
  const std::string name(args.name);
  ActAsCaller caller(context, kCreatesNothing, 0, {path->inode->path.get()});
  if (!caller.ok()) return reply.Error(caller.error().value());
  ReplyXattr(
      args.size(),
      [&](char* buffer, size_t size) {
        return ::getxattr(path->c_str(), name.c_str(), buffer, size);
      },
      std::move(reply));
}

void PassthroughFs::Listxattr(const RequestContext& context, const op::Listxattr& args,
                              XattrReply reply) {
  const base::ErrnoOr<AttributePath> path = AttributePathOf(inodes_, context.nodeid());
  if (!path.ok() && path.error() == base::Errno(ENODATA)) {
    return args.size() == 0 ? reply.Size(0) : reply.Data({});
  }
  if (!path.ok()) return reply.Error(path.error().value());
  ActAsCaller caller(context, kCreatesNothing, 0, {path->inode->path.get()});
  if (!caller.ok()) return reply.Error(caller.error().value());
  ReplyXattr(
      args.size(),
      [&](char* buffer, size_t size) { return ::listxattr(path->c_str(), buffer, size); },
      std::move(reply));
}

void PassthroughFs::Removexattr(const RequestContext& context, const op::Removexattr& args,
                                EmptyReply reply) {
  const std::string name(args.name);
  ChangeXattr(context, std::move(reply),
              [&](const char* path) { return ::removexattr(path, name.c_str()); });
}

// Setting and removing: refused in read-only mode, made as the caller.
void PassthroughFs::ChangeXattr(const RequestContext& context, EmptyReply reply,
                                absl::FunctionRef<int(const char* path)> change) {
  const base::ErrnoOr<AttributePath> path =
      ChangeablePathOf(options_.mount.read_only, inodes_, context.nodeid());
  if (!path.ok()) return reply.Error(path.error().value());
  const base::Errno error = CallAsCaller(context, kCreatesNothing,
                                         [&] { return base::Errno::OfCall(change(path->c_str())); },
                                         0, {path->inode->path.get()});
  if (!error.ok()) return reply.Error(error.value());
  reply.Ok();
}

}  // namespace ringfuse::daemon
