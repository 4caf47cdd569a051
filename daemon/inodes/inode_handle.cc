#include "daemon/inodes/inode_handle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <cerrno>
#include <cstring>

#include "daemon/fs/backing.h"

namespace ringfuse::daemon {
namespace {

// A handle as stored: the mount id, then struct file_handle's type and bytes.
struct StoredHeader {
  int mount_id;
  int type;
};

constexpr size_t kMaxHandleBytes = MAX_HANDLE_SZ;

struct HandleBuffer {
  struct file_handle header;
  unsigned char bytes[kMaxHandleBytes];
};

// Filesystems whose handles reach an inode after the kernel evicted it from its cache. Others
// hand out handles too, but resolve them only while the inode is cached (vfat without nfs=,
// FUSE filesystems without export support such as sshfs or ntfs-3g): a node closed there could
// not be reopened, so its fd stays open instead.
bool HandlesOutliveTheCache(int fd) {
  constexpr long kExt234 = 0xEF53, kXfs = 0x58465342, kBtrfs = 0x9123683E, kTmpfs = 0x01021994,
                 kF2fs = 0xF2F52010;
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return false;
  for (long type : {kExt234, kXfs, kBtrfs, kTmpfs, kF2fs}) {
    if (static_cast<long>(fs.f_type) == type) return true;
  }
  return false;
}

}  // namespace

InodeHandles::InodeHandles(int root) {
  {
    absl::MutexLock lock(&mutex_);
    mounts_ = snapshots_.emplace_back(std::make_unique<MountFds>()).get();
  }
  const std::string handle = HandleOf(root);
  if (handle.empty()) return;
  openable_ = Open(handle).ok();
}

std::string InodeHandles::HandleOf(int fd) {
  HandleBuffer buffer{};
  buffer.header.handle_bytes = kMaxHandleBytes;
  int mount_id = 0;
  if (::name_to_handle_at(fd, "", &buffer.header, &mount_id, AT_EMPTY_PATH) != 0) return {};
  if (!MountServes(mount_id, fd)) return {};
  const StoredHeader header{mount_id, buffer.header.handle_type};
  std::string handle(reinterpret_cast<const char*>(&header), sizeof(header));
  handle.append(reinterpret_cast<const char*>(buffer.header.f_handle), buffer.header.handle_bytes);
  return handle;
}

// Every new node asks, so the answer for a known mount is read without a lock.
bool InodeHandles::MountServes(int mount_id, int fd) {
  if (auto mount = mounts().find(mount_id); mount != mounts().end()) return mount->second >= 0;
  absl::MutexLock lock(&mutex_);
  if (auto mount = mounts().find(mount_id); mount != mounts().end()) return mount->second >= 0;
  return KnowMount(mount_id, fd);
}

bool InodeHandles::KnowMount(int mount_id, int fd) {
  if (!HandlesOutliveTheCache(fd)) {
    AddMount(mount_id, base::UniqueFd());  // for good: no node of this mount is reopenable
    return false;
  }
  // The first inode met on a mount is its top directory, reached by a lookup that crossed the
  // mountpoint: a directory opens without side effects, where a FIFO or device might not.
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  base::ErrnoOr<base::UniqueFd> directory = Reopen(fd, O_RDONLY | O_DIRECTORY);
  if (!directory.ok()) return false;
  AddMount(mount_id, *std::move(directory));
  return true;
}

void InodeHandles::AddMount(int mount_id, base::UniqueFd directory) {
  auto next = std::make_unique<MountFds>(mounts());
  next->emplace(mount_id, directory.get());
  if (directory.valid()) directories_.push_back(std::move(directory));
  mounts_.store(snapshots_.emplace_back(std::move(next)).get(), std::memory_order_release);
}

base::ErrnoOr<base::UniqueFd> InodeHandles::Open(std::string_view handle) const {
  StoredHeader header;
  if (handle.size() < sizeof(header) || handle.size() - sizeof(header) > kMaxHandleBytes) {
    return base::Errno(ESTALE);
  }
  std::memcpy(&header, handle.data(), sizeof(header));
  HandleBuffer buffer{};
  buffer.header.handle_type = header.type;
  buffer.header.handle_bytes = static_cast<unsigned>(handle.size() - sizeof(header));
  std::memcpy(buffer.header.f_handle, handle.data() + sizeof(header), buffer.header.handle_bytes);
  auto mount = mounts().find(header.mount_id);
  const int mount_fd = mount == mounts().end() ? -1 : mount->second;
  if (mount_fd < 0) return base::Errno(ESTALE);
  return base::FdOfCall(
      ::open_by_handle_at(mount_fd, &buffer.header, O_PATH | O_NOFOLLOW | O_CLOEXEC));
}

std::vector<std::pair<int, int>> InodeHandles::Mounts() const {
  return std::vector<std::pair<int, int>>(mounts().begin(), mounts().end());
}

// What this process learned itself stays: it is the same mount.
void InodeHandles::AdoptMount(int mount_id, base::UniqueFd directory) {
  absl::MutexLock lock(&mutex_);
  if (!mounts().contains(mount_id)) AddMount(mount_id, std::move(directory));
}

}  // namespace ringfuse::daemon
