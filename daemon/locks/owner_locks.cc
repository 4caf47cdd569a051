#include "daemon/locks/owner_locks.h"

#include <fcntl.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "daemon/fs/backing.h"

namespace ringfuse::daemon {
namespace {

bool Writable(const FileHandle& handle) { return (handle.flags() & O_ACCMODE) != O_RDONLY; }

// The owner's open of the handle's file: read-write for a writable handle where the daemon may
// (so that it can hold read locks too), else as the handle is.
base::ErrnoOr<base::UniqueFd> OpenFor(const FileHandle& handle) {
  if (Writable(handle)) {
    base::ErrnoOr<base::UniqueFd> writable = Reopen(handle.fd(), O_RDWR);
    if (writable.ok()) return writable;
  }
  return Reopen(handle.fd(), handle.flags() & O_ACCMODE);
}

// A lock line of /proc/self/fdinfo/N, "lock:\t1: OFDLCK  ADVISORY  READ -1 08:01:1234 0 EOF",
// as the lock it describes.
bool ParseLock(const std::string& line, struct flock& lock) {
  const std::vector<absl::string_view> fields =
      absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (fields.size() < 3 || fields[0] != "lock:") return false;
  const bool read = std::find(fields.begin(), fields.end(), "READ") != fields.end();
  if (!read && std::find(fields.begin(), fields.end(), "WRITE") == fields.end()) return false;
  int64_t start = 0, end = 0;
  if (!absl::SimpleAtoi(fields[fields.size() - 2], &start)) return false;
  const bool to_eof = fields.back() == "EOF";
  if (!to_eof && !absl::SimpleAtoi(fields.back(), &end)) return false;
  lock = {};
  lock.l_type = read ? F_RDLCK : F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = start;
  lock.l_len = to_eof ? 0 : end - start + 1;
  return true;
}

// The locks the open file `fd` holds.
std::vector<struct flock> LocksOf(int fd) {
  std::vector<struct flock> locks;
  std::ifstream info("/proc/self/fdinfo/" + std::to_string(fd));
  struct flock lock;
  for (std::string line; std::getline(info, line);) {
    if (ParseLock(line, lock)) locks.push_back(lock);
  }
  return locks;
}

// Takes on `to` the read locks `from` holds (a read-only open holds no other kind). They
// cannot conflict with anyone's: `from` holds them already. On failure `to` is to be closed,
// which lets go of what it took.
base::Errno CarryReadLocks(int from, int to) {
  if (!std::ifstream("/proc/self/fdinfo/" + std::to_string(from))) return base::Errno(EIO);
  for (struct flock lock : LocksOf(from)) {
    if (::fcntl(to, F_OFD_SETLK, &lock) != 0) return base::Errno::Last();
  }
  return base::Errno();
}

}  // namespace

OwnerLocks::Limits OwnerLocks::DefaultLimits() {
  constexpr size_t kFewest = 64;
  struct rlimit limit {};
  size_t total = kFewest;
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    total = limit.rlim_cur == RLIM_INFINITY ? size_t{1} << 20
                                            : std::max<size_t>(limit.rlim_cur / 8, kFewest);
  }
  return Limits{total, total / 4};
}

base::ErrnoOr<std::shared_ptr<OwnerLocks::Request>> OwnerLocks::Begin(
    const FileHandle& handle, uint64_t fh, uint64_t owner,
    absl::FunctionRef<Account()> account_of) {
  const Key key{handle.dev(), handle.ino(), owner};
  absl::MutexLock hold(&mutex_);
  if (const base::Errno error = Prepare(key, handle, account_of); !error.ok()) return error;
  OwnerOpen& open = opens_[key];
  ++open.requests;
  open.last_fh = fh;
  Counted();
  return std::make_shared<Request>(*this, key);
}

base::Errno OwnerLocks::Prepare(const Key& key, const FileHandle& handle,
                                absl::FunctionRef<Account()> account_of) {
  auto known = opens_.find(key);
  if (known == opens_.end()) return Open(key, handle, account_of);
  if (known->second.writable || !Writable(handle)) return base::Errno();
  base::ErrnoOr<base::UniqueFd> fd = OpenFor(handle);
  // Made writable where it can be; else the read-only open serves on (a write lock there fails).
  if (!fd.ok() || !CarryReadLocks(known->second.fd.get(), fd->get()).ok()) return base::Errno();
  known->second.fd = *std::move(fd);  // the read-only open closes: its locks are held anew
  known->second.writable = true;
  return base::Errno();
}

// The account is asked for here only, once per owner's open made: it reads /proc, as the open
// itself makes a system call, under the mutex.
base::Errno OwnerLocks::Open(const Key& key, const FileHandle& handle,
                             absl::FunctionRef<Account()> account_of) {
  if (opens_.size() >= limits_.total) return base::Errno(ENOLCK);
  const Account account = account_of();
  if (OpensOf(account) >= limits_.per_user) return base::Errno(ENOLCK);
  base::ErrnoOr<base::UniqueFd> fd = OpenFor(handle);
  if (!fd.ok()) return fd.error();
  opens_.emplace(key,
                 OwnerOpen{.fd = *std::move(fd), .account = account, .writable = Writable(handle)});
  ++per_user_[account];
  return base::Errno();
}

base::Errno OwnerLocks::Probe(const FileHandle& handle, uint64_t owner, struct flock& lock) {
  const Key key{handle.dev(), handle.ino(), owner};
  absl::MutexLock hold(&mutex_);
  const auto known = opens_.find(key);
  const int fd = known != opens_.end() ? known->second.fd.get() : handle.fd();
  if (::fcntl(fd, F_OFD_GETLK, &lock) != 0) return base::Errno::Last();
  if (lock.l_type != F_UNLCK) lock.l_pid = HolderOf(key, lock);
  return base::Errno();
}

bool OwnerLocks::Holds(const FileHandle& handle, uint64_t owner) const {
  if (held_.load(std::memory_order_acquire) == 0) return false;
  absl::ReaderMutexLock hold(&mutex_);
  return opens_.contains(Key{handle.dev(), handle.ino(), owner});
}

base::Errno OwnerLocks::Set(const Key& key, struct flock lock, uint32_t pid) {
  absl::MutexLock hold(&mutex_);
  OwnerOpen& open = opens_.at(key);
  if (::fcntl(open.fd.get(), F_OFD_SETLK, &lock) != 0) return base::Errno::Last();
  if (lock.l_type != F_UNLCK) {
    open.flushed = false;
    open.pid = pid;
  }
  return base::Errno();
}

pid_t OwnerLocks::HolderOf(const Key& key, const struct flock& lock) {
  const auto& [dev, ino, asker] = key;
  for (auto open = opens_.lower_bound(Key{dev, ino, 0});
       open != opens_.end() && std::get<0>(open->first) == dev && std::get<1>(open->first) == ino;
       ++open) {
    if (std::get<2>(open->first) == asker) continue;
    for (const struct flock& held : LocksOf(open->second.fd.get())) {
      if (held.l_type == lock.l_type && held.l_start == lock.l_start && held.l_len == lock.l_len) {
        return static_cast<pid_t>(open->second.pid);
      }
    }
  }
  return 0;
}

void OwnerLocks::End(const Key& key) {
  absl::MutexLock hold(&mutex_);
  auto known = opens_.find(key);
  if (--known->second.requests == 0 && known->second.flushed) Erase(known);
  Counted();
}

void OwnerLocks::Drop(const FileHandle& handle, uint64_t owner) {
  if (held_.load(std::memory_order_acquire) == 0) return;
  absl::MutexLock hold(&mutex_);
  auto known = opens_.find(Key{handle.dev(), handle.ino(), owner});
  if (known != opens_.end()) DropOpen(known);
}

void OwnerLocks::Released(uint64_t fh) {
  if (held_.load(std::memory_order_acquire) == 0) return;
  absl::MutexLock hold(&mutex_);
  for (auto open = opens_.begin(); open != opens_.end();) {
    const auto next = std::next(open);
    if (open->second.last_fh == fh) DropOpen(open);
    open = next;
  }
}

size_t OwnerLocks::OpensOf(Account account) const {
  const auto counted = per_user_.find(account);
  return counted == per_user_.end() ? 0 : counted->second;
}

void OwnerLocks::Erase(Opens::iterator open) {
  if (const Account account = open->second.account;
      account != kNoAccount && --per_user_[account] == 0) {
    per_user_.erase(account);
  }
  opens_.erase(open);
}

void OwnerLocks::DropOpen(Opens::iterator open) {
  if (open->second.requests == 0) {
    Erase(open);  // closing the open releases its locks
    Counted();
    return;
  }
  struct flock all {};
  all.l_type = F_UNLCK;
  all.l_whence = SEEK_SET;
  ::fcntl(open->second.fd.get(), F_OFD_SETLK, &all);
  open->second.flushed = true;
}

size_t OwnerLocks::opens() const {
  absl::ReaderMutexLock hold(&mutex_);
  return opens_.size();
}

std::vector<OwnerLocks::Saved> OwnerLocks::Save() const {
  absl::ReaderMutexLock hold(&mutex_);
  std::vector<Saved> saved;
  for (const auto& [key, open] : opens_) {
    const auto& [dev, ino, owner] = key;
    saved.push_back(Saved{dev, ino, owner, open.fd.get(), open.writable, open.last_fh, open.pid});
  }
  return saved;
}

void OwnerLocks::Restore(const Saved& saved, base::UniqueFd fd) {
  absl::MutexLock hold(&mutex_);
  OwnerOpen& open = opens_[{saved.dev, saved.ino, saved.owner}];
  open.fd = std::move(fd);
  open.writable = saved.writable;
  open.last_fh = saved.last_fh;
  open.pid = saved.pid;
  Counted();
}

base::Errno OwnerLocks::CheckAccess(const FileHandle& handle, short lock_type) {
  const int mode = handle.flags() & O_ACCMODE;
  if (lock_type == F_RDLCK && mode == O_WRONLY) return base::Errno(EBADF);
  if (lock_type == F_WRLCK && mode == O_RDONLY) return base::Errno(EBADF);
  return base::Errno();
}

}  // namespace ringfuse::daemon
