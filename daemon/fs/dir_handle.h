// What an open directory's fh points to: the backing directory stream it is listed from, and
// where that stream stands, so that a listing read in several READDIRs reads the directory once.
#pragma once

#include <dirent.h>

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "base/errno.h"

namespace ringfuse::daemon {

// One entry of the backing directory, as readdir(3) gave it.
struct DirEntry {
  std::string_view name;
  ino_t ino;
  unsigned char type;
  uint64_t next;  // the cookie of the entry after it (d_off)
};

class DirHandle {
 public:
  explicit DirHandle(DIR* stream) : dir_(stream) {}
  ~DirHandle() { ::closedir(dir_); }
  DirHandle(const DirHandle&) = delete;
  DirHandle& operator=(const DirHandle&) = delete;

  int fd() const { return ::dirfd(dir_); }
  // For a stream made on an fd another daemon listed from (a handover): where it stands is not
  // known, so the next listing seeks to the cookie it asks for.
  void ForgetPosition() ABSL_LOCKS_EXCLUDED(mutex_) {
    absl::MutexLock lock(&mutex_);
    stands_at_.reset();
    kept_ = false;
  }

  // The entries from cookie `offset` on, one call of `add` each until it returns false: that
  // entry is kept for the next listing, which (as the kernel's READDIRs do) usually resumes right
  // there. Every other offset costs a seekdir(3), after which glibc and the backing filesystem
  // read the directory again from that cookie (ext4 rebuilds its hash cursor); resuming where the
  // stream stands costs nothing. Returns no error at the end or when `add` refused one, else the
  // error of a failed read. Listings of one handle take turns.
  template <typename Add>
  base::Errno List(uint64_t offset, Add add) ABSL_LOCKS_EXCLUDED(mutex_);

 private:
  // The next entry: the one kept, else the stream's. False at the end.
  base::ErrnoOr<bool> Next(DirEntry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  absl::Mutex mutex_;
  DIR* const dir_;
  std::optional<uint64_t> stands_at_ ABSL_GUARDED_BY(mutex_) = 0;  // unknown after a failed read
  bool kept_ ABSL_GUARDED_BY(mutex_) = false;  // the entry at stands_at_ was read but not listed
  std::string kept_name_ ABSL_GUARDED_BY(mutex_);
  DirEntry kept_entry_ ABSL_GUARDED_BY(mutex_){};
};

template <typename Add>
base::Errno DirHandle::List(uint64_t offset, Add add) {
  absl::MutexLock lock(&mutex_);
  if (stands_at_ != offset) {
    ::seekdir(dir_, static_cast<long>(offset));
    stands_at_ = offset;
    kept_ = false;
  }
  for (;;) {
    DirEntry entry;
    const base::ErrnoOr<bool> read = Next(entry);
    if (!read.ok()) {
      stands_at_.reset();
      return read.error();
    }
    if (!*read) return base::Errno();
    if (!add(entry)) {
      if (!kept_) {
        kept_name_.assign(entry.name);
        kept_entry_ = entry;
        kept_entry_.name = kept_name_;
        kept_ = true;
      }
      return base::Errno();
    }
    kept_ = false;
    stands_at_ = entry.next;
  }
}

// readdir(3) tells its end from an error only by errno, which it leaves alone at the end.
inline base::ErrnoOr<bool> DirHandle::Next(DirEntry& entry) {
  if (kept_) {
    entry = kept_entry_;
    return true;
  }
  errno = 0;
  const dirent* read = ::readdir(dir_);
  if (read == nullptr) {
    if (errno != 0) return base::Errno::Last();
    return false;
  }
  entry = DirEntry{read->d_name, read->d_ino, read->d_type, static_cast<uint64_t>(read->d_off)};
  return true;
}

}  // namespace ringfuse::daemon
