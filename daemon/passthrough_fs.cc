#include "daemon/passthrough_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"

namespace ringfuse::daemon {
namespace {

// Opens what an O_PATH fd refers to, with real access flags: the kernel re-checks permissions
// on the magic link, and nothing is resolved by name.
int Reopen(int path_fd, int flags) {
  const std::string proc_path = absl::StrFormat("/proc/self/fd/%d", path_fd);
  return ::open(proc_path.c_str(), (flags & ~(O_CREAT | O_EXCL | O_NOCTTY)) | O_CLOEXEC);
}

}  // namespace

PassthroughFs::PassthroughFs(UniqueFd root, const DaemonOptions& options)
    : inodes_(std::move(root)), options_(options) {}

void PassthroughFs::Lookup(const RequestContext& context, const op::Lookup& args,
                           EntryReply reply) {
  Found found;
  if (const int error = inodes_.Lookup(context.nodeid(), args.name, found); error != 0) {
    if (error == ENOENT &&
        options_.negative_timeout.seconds + options_.negative_timeout.nanoseconds) {
      return reply.Ok(MakeNegativeEntry(options_.negative_timeout));
    }
    return reply.Error(error);
  }
  reply.Ok(MakeEntry(found.inode->nodeid, 1, AttrFromStat(found.attr), options_.entry_timeout,
                     options_.attr_timeout));
}

void PassthroughFs::Forget(const RequestContext& context, const op::Forget& args) {
  inodes_.Forget(context.nodeid(), args.in.nlookup);
}

void PassthroughFs::BatchForget(const RequestContext&, const op::BatchForget& args) {
  for (uint32_t i = 0; i < args.forgets.size(); ++i) {
    const abi::ForgetOne one = args.forgets[i];
    inodes_.Forget(one.nodeid, one.nlookup);
  }
}

void PassthroughFs::Getattr(const RequestContext& context, const op::Getattr&, AttrReply reply) {
  const std::shared_ptr<const Inode> inode = inodes_.Get(context.nodeid());
  if (inode == nullptr) return reply.Error(ESTALE);
  struct stat st;
  if (::fstatat(inode->path.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
    return reply.Error(errno);
  }
  reply.Ok(MakeAttrOut(AttrFromStat(st), options_.attr_timeout));
}

void PassthroughFs::Readlink(const RequestContext& context, const op::Readlink&, DataReply reply) {
  const std::shared_ptr<const Inode> inode = inodes_.Get(context.nodeid());
  if (inode == nullptr) return reply.Error(ESTALE);
  char target[abi::kSymlinkTargetMax + 1];
  const ssize_t length = ::readlinkat(inode->path.get(), "", target, sizeof(target));
  if (length < 0) return reply.Error(errno);
  reply.Ok(ConstBytes(reinterpret_cast<const std::byte*>(target), static_cast<size_t>(length)));
}

void PassthroughFs::Open(const RequestContext& context, const op::Open& args, OpenReply reply) {
  const std::shared_ptr<const Inode> inode = inodes_.Get(context.nodeid());
  if (inode == nullptr) return reply.Error(ESTALE);
  const int fd = Reopen(inode->path.get(), static_cast<int>(args.in.flags));
  if (fd < 0) return reply.Error(errno);
  uint32_t flags = options_.keep_cache ? abi::kFopenKeepCache : 0;
  if (!options_.cache) flags |= abi::kFopenDirectIo;
  reply.Ok(MakeOpenOut(static_cast<uint64_t>(fd), flags));
}

void PassthroughFs::Read(const RequestContext&, const op::Read& args, DataReply reply) {
  // A thread-local buffer: the request path allocates only the first time a size is seen.
  thread_local std::vector<std::byte> buffer;
  if (buffer.size() < args.in.size) buffer.resize(args.in.size);
  const ssize_t length = ::pread(static_cast<int>(args.in.fh), buffer.data(), args.in.size,
                                 static_cast<off_t>(args.in.offset));
  if (length < 0) return reply.Error(errno);
  reply.Ok(ConstBytes(buffer.data(), static_cast<size_t>(length)));
}

void PassthroughFs::Release(const RequestContext&, const op::Release& args, EmptyReply reply) {
  ::close(static_cast<int>(args.in.fh));
  reply.Ok();
}

void PassthroughFs::Statfs(const RequestContext& context, const op::Statfs&, StatfsReply reply) {
  const std::shared_ptr<const Inode> inode = inodes_.Get(context.nodeid());
  if (inode == nullptr) return reply.Error(ESTALE);
  struct statvfs st;
  if (::fstatvfs(inode->path.get(), &st) != 0) return reply.Error(errno);
  abi::Kstatfs out{};
  out.blocks = st.f_blocks;
  out.bfree = st.f_bfree;
  out.bavail = st.f_bavail;
  out.files = st.f_files;
  out.ffree = st.f_ffree;
  out.bsize = static_cast<uint32_t>(st.f_bsize);
  out.namelen = static_cast<uint32_t>(st.f_namemax);
  out.frsize = static_cast<uint32_t>(st.f_frsize);
  reply.Ok(out);
}

void PassthroughFs::Opendir(const RequestContext& context, const op::Opendir&, OpenReply reply) {
  const std::shared_ptr<const Inode> inode = inodes_.Get(context.nodeid());
  if (inode == nullptr) return reply.Error(ESTALE);
  const int fd = Reopen(inode->path.get(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return reply.Error(errno);
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    const int error = errno;
    ::close(fd);
    return reply.Error(error);
  }
  reply.Ok(MakeOpenOut(reinterpret_cast<uint64_t>(dir), 0));
}

void PassthroughFs::Readdir(const RequestContext& context, const op::Readdir& args,
                            DataReply reply) {
  List(context.nodeid(), args.in.fh, args.in.offset, args.in.size, false, std::move(reply));
}

void PassthroughFs::Readdirplus(const RequestContext& context, const op::Readdirplus& args,
                                DataReply reply) {
  List(context.nodeid(), args.in.fh, args.in.offset, args.in.size, true, std::move(reply));
}

// Offsets are the backing directory's own telldir cookies (d_off), so the kernel resumes exactly
// where the last reply stopped. With `plus`, each entry but . and .. is also looked up, and a
// lookup whose entry did not fit is given back.
void PassthroughFs::List(uint64_t dir_node, uint64_t fh, uint64_t offset, uint32_t size, bool plus,
                         DataReply reply) {
  DIR* dir = reinterpret_cast<DIR*>(fh);
  ::seekdir(dir, static_cast<long>(offset));
  thread_local std::vector<std::byte> buffer;
  if (buffer.size() < size) buffer.resize(size);
  DirentPacker packer(MutableBytes(buffer.data(), size));
  for (;;) {
    const long position = ::telldir(dir);
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      if (errno != 0 && packer.count() == 0) return reply.Error(errno);
      break;
    }
    const std::string_view name(entry->d_name);
    const uint64_t next = static_cast<uint64_t>(entry->d_off);
    bool fitted;
    if (plus && IsPlainName(name)) {
      Found found;
      if (const int error = inodes_.Lookup(dir_node, name, found); error != 0) continue;
      fitted = packer.AddPlus(MakeEntry(found.inode->nodeid, 1, AttrFromStat(found.attr),
                                        options_.entry_timeout, options_.attr_timeout),
                              next, entry->d_type, name);
      if (!fitted) inodes_.Forget(found.inode->nodeid, 1);
    } else if (plus) {
      // . and ..: no node id (the kernel looks nothing up), but a real inode number, since
      // readdir(3) hides entries whose inode number is 0.
      abi::EntryOut no_lookup{};
      no_lookup.attr.ino = entry->d_ino;
      fitted = packer.AddPlus(no_lookup, next, entry->d_type, name);
    } else {
      fitted = packer.Add(entry->d_ino, next, entry->d_type, name);
    }
    if (!fitted) {
      ::seekdir(dir, position);
      break;
    }
  }
  reply.Ok(packer.packed());
}

void PassthroughFs::Releasedir(const RequestContext&, const op::Releasedir& args,
                               EmptyReply reply) {
  ::closedir(reinterpret_cast<DIR*>(args.in.fh));
  reply.Ok();
}

}  // namespace ringfuse::daemon
