#include "daemon/owner_locks.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "daemon/backing.h"

namespace ringfuse::daemon {
namespace {

bool Writable(const FileHandle& handle) { return (handle.flags() & O_ACCMODE) != O_RDONLY; }

// The owner's open of the handle's file: read-write for a writable handle where the daemon may
// (so that it can hold read locks too), else as the handle is.
UniqueFd OpenFor(const FileHandle& handle) {
  UniqueFd fd;
  if (Writable(handle)) fd.reset(Reopen(handle.fd(), O_RDWR));
  if (!fd.valid()) fd.reset(Reopen(handle.fd(), handle.flags() & O_ACCMODE));
  return fd;
}

// A READ line of /proc/self/fdinfo/N, "lock:\t1: OFDLCK  ADVISORY  READ -1 08:01:1234 0 EOF",
// as the lock it describes.
bool ParseReadLock(const std::string& line, struct flock& lock) {
  const std::vector<absl::string_view> fields =
      absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (fields.size() < 3 || fields[0] != "lock:" ||
      std::find(fields.begin(), fields.end(), "READ") == fields.end()) {
    return false;
  }
  int64_t start = 0, end = 0;
  if (!absl::SimpleAtoi(fields[fields.size() - 2], &start)) return false;
  const bool to_eof = fields.back() == "EOF";
  if (!to_eof && !absl::SimpleAtoi(fields.back(), &end)) return false;
  lock = {};
  lock.l_type = F_RDLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = start;
  lock.l_len = to_eof ? 0 : end - start + 1;
  return true;
}

// Takes on `to` the read locks `from` holds (a read-only open holds no other kind). They
// cannot conflict with anyone's: `from` holds them already. On failure `to` is to be closed,
// which lets go of what it took.
int CarryReadLocks(int from, int to) {
  std::ifstream info("/proc/self/fdinfo/" + std::to_string(from));
  if (!info) return EIO;
  struct flock lock;
  for (std::string line; std::getline(info, line);) {
    if (ParseReadLock(line, lock) && ::fcntl(to, F_OFD_SETLK, &lock) != 0) return errno;
  }
  return 0;
}

}  // namespace

std::shared_ptr<OwnerLocks::Request> OwnerLocks::Begin(const FileHandle& handle, uint64_t owner) {
  const Key key{handle.dev(), handle.ino(), owner};
  absl::MutexLock hold(&mutex_);
  if (const int error = Prepare(key, handle); error != 0) {
    errno = error;
    return nullptr;
  }
  ++opens_[key].requests;
  return std::make_shared<Request>(*this, key);
}

int OwnerLocks::Prepare(const Key& key, const FileHandle& handle) {
  auto known = opens_.find(key);
  if (known != opens_.end() && (known->second.writable || !Writable(handle))) return 0;
  UniqueFd fd = OpenFor(handle);
  if (known == opens_.end()) {
    if (!fd.valid()) return errno;
    opens_.emplace(key, OwnerOpen{std::move(fd), Writable(handle)});
    return 0;
  }
  // Made writable where it can be; else the read-only open serves on (a write lock there fails).
  if (!fd.valid() || CarryReadLocks(known->second.fd.get(), fd.get()) != 0) return 0;
  known->second.fd = std::move(fd);  // the read-only open closes: its locks are held anew
  known->second.writable = true;
  return 0;
}

int OwnerLocks::Lock(const Key& key, int command, struct flock& lock) {
  absl::MutexLock hold(&mutex_);
  OwnerOpen& open = opens_.at(key);  // kept while a Request is alive
  if (::fcntl(open.fd.get(), command, &lock) != 0) return errno;
  if (command == F_OFD_SETLK && lock.l_type != F_UNLCK) open.flushed = false;
  return 0;
}

void OwnerLocks::End(const Key& key) {
  absl::MutexLock hold(&mutex_);
  auto known = opens_.find(key);
  if (--known->second.requests == 0 && known->second.flushed) opens_.erase(known);
}

void OwnerLocks::Drop(const FileHandle& handle, uint64_t owner) {
  absl::MutexLock hold(&mutex_);
  auto known = opens_.find(Key{handle.dev(), handle.ino(), owner});
  if (known == opens_.end()) return;
  if (known->second.requests == 0) {
    opens_.erase(known);  // closing the open releases its locks
    return;
  }
  struct flock all {};
  all.l_type = F_UNLCK;
  all.l_whence = SEEK_SET;
  ::fcntl(known->second.fd.get(), F_OFD_SETLK, &all);
  known->second.flushed = true;
}

size_t OwnerLocks::opens() const {
  absl::ReaderMutexLock hold(&mutex_);
  return opens_.size();
}

int OwnerLocks::CheckAccess(const FileHandle& handle, short lock_type) {
  const int mode = handle.flags() & O_ACCMODE;
  if (lock_type == F_RDLCK && mode == O_WRONLY) return EBADF;
  if (lock_type == F_WRLCK && mode == O_RDONLY) return EBADF;
  return 0;
}

}  // namespace ringfuse::daemon
