// PassthroughFs: directory entries (symlink, mknod, mkdir, link, unlink, rmdir, rename), each
// made as the caller on a plain name under the parent's O_PATH fd, never following a symlink.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "daemon/access/credentials.h"
#include "daemon/fs/backing.h"
#include "daemon/fs/passthrough_fs.h"

namespace ringfuse::daemon {

base::ErrnoOr<std::shared_ptr<const Inode>> PassthroughFs::ChangeableDirectory(
    uint64_t nodeid, std::string_view name) {
  if (options_.mount.read_only) return base::Errno(EROFS);
  if (!IsPlainName(name)) return base::Errno(EINVAL);
  return inodes_.Get(nodeid);
}

void PassthroughFs::AddEntry(const RequestContext& context, std::string_view name, uint32_t umask,
                             absl::FunctionRef<int(int dir_fd, const char* name)> make,
                             EntryReply reply) {
  const base::ErrnoOr<std::shared_ptr<const Inode>> dir =
      ChangeableDirectory(context.nodeid(), name);
  if (!dir.ok()) return reply.Error(dir.error().value());
  const std::string name_string(name);
  const int dir_fd = (*dir)->path.get();
  const ChangePlace place{.dir_fd = dir_fd, .name = name_string.c_str(), .maker = context.uid()};
  const ChangeResult made =
      changes_once_.Make(context, name, ChangeKind::kNameAdded, place, [&]() -> ChangeResult {
        return CallAsCaller(
            context, CreateUmask(umask),
            [&] { return ChangeResultOf(base::Errno::OfCall(make(dir_fd, name_string.c_str()))); },
            0, {dir_fd});
      });
  if (!made.ok()) return reply.Error(made.error().value());
  wire::EntryOut entry;
  if (const base::Errno error = EntryOf(context.nodeid(), name, entry, true); !error.ok()) {
    return reply.Error(error.value());
  }
  reply.Ok(entry);
}

void PassthroughFs::RemoveEntry(const RequestContext& context, std::string_view name,
                                absl::FunctionRef<int(int dir_fd, const char* name)> remove,
                                EmptyReply reply) {
  const std::shared_ptr<const Inode> leaving = inodes_.NodeNamed(context.nodeid(), name);
  ChangeEntry(
      context, name, ChangeKind::kNameRemoved, -1, nullptr, remove,
      [&] { inodes_.Removed(context.nodeid(), name, leaving); }, std::move(reply));
}

// A node that loses its name is held open across the change by the caller: the table, which may
// have reached it only by that name, keeps that fd once the name is gone.
void PassthroughFs::ChangeEntry(const RequestContext& context, std::string_view name,
                                ChangeKind kind, int to_dir_fd, const char* to_name,
                                NameCall change, absl::FunctionRef<void()> changed,
                                EmptyReply reply) {
  const base::ErrnoOr<std::shared_ptr<const Inode>> dir =
      ChangeableDirectory(context.nodeid(), name);
  if (!dir.ok()) return reply.Error(dir.error().value());
  const std::string name_string(name);
  const char* const plain = name_string.c_str();
  const int dir_fd = (*dir)->path.get();
  const ChangePlace place{
      .dir_fd = dir_fd, .name = plain, .to_dir_fd = to_dir_fd, .to_name = to_name};
  const ChangeResult result = changes_once_.Make(context, name, kind, place, [&] {
    return CallAsCaller(context, kCreatesNothing,
                        [&] { return ChangeResultOf(base::Errno::OfCall(change(dir_fd, plain))); },
                        0, {dir_fd, to_dir_fd});
  });
  if (!result.ok()) return reply.Error(result.error().value());
  changed();
  reply.Ok();
}

void PassthroughFs::Symlink(const RequestContext& context, const op::Symlink& args,
                            EntryReply reply) {
  const std::string target(args.target);
  AddEntry(
      context, args.name, 0,
      [&](int dir, const char* name) { return ::symlinkat(target.c_str(), dir, name); },
      std::move(reply));
}

// Fifos, sockets, regular files, and devices where the caller may make them (CAP_MKNOD is one
// of the capabilities a non-root fsuid loses).
void PassthroughFs::Mknod(const RequestContext& context, const op::Mknod& args, EntryReply reply) {
  AddEntry(
      context, args.name, args.umask(),
      [&](int dir, const char* name) { return ::mknodat(dir, name, args.mode(), args.rdev()); },
      std::move(reply));
}

void PassthroughFs::Mkdir(const RequestContext& context, const op::Mkdir& args, EntryReply reply) {
  AddEntry(
      context, args.name, args.umask(),
      [&](int dir, const char* name) { return ::mkdirat(dir, name, args.mode()); },
      std::move(reply));
}

// The inode is linked through its /proc/self/fd magic link: linkat(fd, "", AT_EMPTY_PATH) needs
// CAP_DAC_READ_SEARCH, which a caller's fsuid does not keep. The link is followed to the inode
// itself, so a symlink gets a new name, never its target.
void PassthroughFs::Link(const RequestContext& context, const op::Link& args, EntryReply reply) {
  const base::ErrnoOr<std::shared_ptr<const Inode>> inode_ref = inodes_.Get(args.oldnodeid());
  if (!inode_ref.ok()) return reply.Error(inode_ref.error().value());
  const Inode& inode = **inode_ref;
  const std::string source = ProcPath(inode.path.get());
  AddEntry(
      context, args.new_name, 0,
      [&](int dir, const char* name) {
        return ::linkat(AT_FDCWD, source.c_str(), dir, name, AT_SYMLINK_FOLLOW);
      },
      std::move(reply));
}

void PassthroughFs::Unlink(const RequestContext& context, const op::Unlink& args,
                           EmptyReply reply) {
  RemoveEntry(
      context, args.name, [](int dir, const char* name) { return ::unlinkat(dir, name, 0); },
      std::move(reply));
}

void PassthroughFs::Rmdir(const RequestContext& context, const op::Rmdir& args, EmptyReply reply) {
  RemoveEntry(
      context, args.name,
      [](int dir, const char* name) { return ::unlinkat(dir, name, AT_REMOVEDIR); },
      std::move(reply));
}

// RENAME_NOREPLACE, RENAME_EXCHANGE and RENAME_WHITEOUT go to the backing filesystem as given.
// A rename was made when the new name names the inode the old one named before: so for each
// flag, an exchange too, whose names both exist either way.
void PassthroughFs::Rename(const RequestContext& context, const op::Rename& args,
                           EmptyReply reply) {
  const base::ErrnoOr<std::shared_ptr<const Inode>> new_dir_ref = inodes_.Get(args.newdir());
  if (!new_dir_ref.ok()) return reply.Error(new_dir_ref.error().value());
  const Inode& new_dir = **new_dir_ref;
  if (!IsPlainName(args.new_name)) return reply.Error(EINVAL);
  const std::string new_name(args.new_name);
  const std::shared_ptr<const Inode> replaced = inodes_.NodeNamed(args.newdir(), new_name);
  ChangeEntry(
      context, args.old_name, ChangeKind::kNameMoved, new_dir.path.get(), new_name.c_str(),
      [&](int dir, const char* name) {
        return ::renameat2(dir, name, new_dir.path.get(), new_name.c_str(), args.flags());
      },
      [&] {
        inodes_.Renamed(context.nodeid(), args.old_name, args.newdir(), new_name,
                        (args.flags() & RENAME_EXCHANGE) != 0, replaced);
      },
      std::move(reply));
}

}  // namespace ringfuse::daemon
