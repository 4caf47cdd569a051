// PassthroughFs: listing directories (readdir and readdirplus on the backing directory's own
// cookies) and syncing them.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "daemon/access/credentials.h"
#include "daemon/access/search_permission.h"
#include "daemon/fs/backing.h"
#include "daemon/fs/passthrough_fs.h"

namespace ringfuse::daemon {

void PassthroughFs::Opendir(const RequestContext& context, const op::Opendir&, OpenReply reply) {
  const base::ErrnoOr<std::shared_ptr<const Inode>> inode_ref = inodes_.Get(context.nodeid());
  if (!inode_ref.ok()) return reply.Error(inode_ref.error().value());
  const Inode& inode = **inode_ref;
  // As the caller: without default_permissions, this is where the right to list is checked.
  base::ErrnoOr<base::UniqueFd> fd = CallAsCaller(
      context, kCreatesNothing, [&] { return Reopen(inode.path.get(), O_RDONLY | O_DIRECTORY); }, 0,
      {inode.path.get()});
  if (!fd.ok()) return reply.Error(fd.error().value());
  DIR* dir = ::fdopendir(fd->get());
  if (dir == nullptr) return reply.Error(base::Errno::Last().value());
  fd->release();  // the stream owns it now
  const std::string handle = open_.journaled() ? inodes_.handles().HandleOf(::dirfd(dir)) : "";
  const uint64_t fh = open_.AddDir(std::make_unique<DirHandle>(dir), context.nodeid(), handle);
  reply.Ok(MakeOpenOut(fh, DirOpenFlags()));
}

// With caching the kernel keeps a directory's listing (FOPEN_CACHE_DIR) across opens
// (FOPEN_KEEP_CACHE), as it keeps a file's pages: it drops it itself when the directory changes
// through the mount, and at a listing from the start once a GETATTR past the attribute timeout
// shows another mtime, for changes behind the mount's back (fs/fuse/readdir.c). Not in revisions
// mode: a switch serves another tree under the same node, whose cached mtime INC_EPOCH leaves.
uint32_t PassthroughFs::DirOpenFlags() const {
  if (!options_.cache || options_.mode == Mode::kRevisions) return 0;
  return wire::kFopenCacheDir | wire::kFopenKeepCache;
}

void PassthroughFs::Readdir(const RequestContext& context, const op::Readdir& args,
                            DirReply reply) {
  List(context.nodeid(), args.fh(), false, std::move(reply));
}

void PassthroughFs::Readdirplus(const RequestContext& context, const op::Readdirplus& args,
                                DirPlusReply reply) {
  List(context.nodeid(), args.fh(), true, std::move(reply));
}

namespace {

// An entry handed over without a lookup: no node id, so the kernel caches nothing and looks the
// name up itself when asked for it, but a real inode number, since readdir(3) hides entries
// whose inode number is 0.
bool AddUnlooked(DirentPacker& packer, const DirEntry& entry) {
  wire::EntryOut no_lookup{};
  no_lookup.attr.ino = entry.ino;
  return packer.AddPlus(no_lookup, entry.next, entry.type, entry.name);
}

}  // namespace

// Offsets are the backing directory's own telldir cookies (d_off), so the kernel resumes exactly
// where the last reply stopped. With `plus`, each entry but . and .. is also looked up, and a
// lookup whose entry did not fit is given back; not in a directory whose names must not stay
// cached (search_permission.h): the kernel's own LOOKUPs, as each caller, check who may see them.
void PassthroughFs::List(uint64_t dir_node, uint64_t fh, bool plus, DirListingReply reply) {
  served_.listings.fetch_add(1, std::memory_order_relaxed);
  const std::shared_ptr<DirHandle> handle = open_.Dir(fh);
  if (handle == nullptr) return reply.Error(EBADF);
  const bool look_up = plus && KernelChecksWalksThrough(options_, handle->fd());
  DirentPacker& packer = reply.packer();
  const base::Errno error = handle->List(reply.offset(), [&](const DirEntry& entry) {
    if (look_up && IsPlainName(entry.name)) {
      Found found;
      // A name gone since it was read is left out, as a listing natively may or may not show it.
      if (!inodes_.Lookup(dir_node, entry.name, found).ok()) return true;
      if (packer.AddPlus(EntryFor(found), entry.next, entry.type, entry.name)) return true;
      inodes_.Forget(found.inode->nodeid, 1);
      return false;
    }
    if (plus) return AddUnlooked(packer, entry);
    return packer.Add(entry.ino, entry.next, entry.type, entry.name);
  });
  if (!error.ok() && packer.count() == 0) return reply.Error(error.value());
  if (look_up) pruner_.PruneIfTooManyPinned();
  reply.Ok();
}

void PassthroughFs::Releasedir(const RequestContext&, const op::Releasedir& args,
                               EmptyReply reply) {
  if (open_.ReleaseDir(args.fh()) == nullptr) return open_.FinishUnknown(args.fh(), reply);
  reply.Ok();
}

void PassthroughFs::Fsyncdir(const RequestContext&, const op::Fsyncdir& args, EmptyReply reply) {
  const std::shared_ptr<DirHandle> handle = open_.Dir(args.fh());
  if (handle == nullptr) return SyncUnknown(args.fh(), reply);
  if (const base::Errno error = Sync(handle->fd(), args.datasync()); !error.ok()) {
    return reply.Error(error.value());
  }
  reply.Ok();
}

}  // namespace ringfuse::daemon
