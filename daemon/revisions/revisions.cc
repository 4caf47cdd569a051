#include "daemon/revisions/revisions.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/deadline.h"
#include "base/errno_status.h"

namespace ringfuse::daemon {
namespace {

// Version order, glibc's strverscmp: digit runs compare as numbers, so r9 < r10 and
// 2026.9 < 2026.10.
bool VersionLess(const std::string& a, const std::string& b) {
  return ::strverscmp(a.c_str(), b.c_str()) < 0;
}

// Some filesystems leave d_type unknown; then the entry itself says.
bool IsDirectory(int dir_fd, const dirent& entry) {
  if (entry.d_type != DT_UNKNOWN) return entry.d_type == DT_DIR;
  struct stat st;
  return ::fstatat(dir_fd, entry.d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

absl::StatusOr<RevisionRepo> RevisionRepo::Open(const std::string& path) {
  base::UniqueFd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) {
    return base::ErrnoStatus(errno, absl::StrFormat("revision repository %s", path));
  }
  return RevisionRepo(path, std::move(fd));
}

absl::StatusOr<base::UniqueFd> RevisionRepo::OpenRevision(std::string_view name) const {
  if (!IsPlainName(name)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("\"%s\" is not a revision name: one directory name in %s", name, path_));
  }
  const std::string name_string(name);
  base::UniqueFd fd(
      ::openat(fd_.get(), name_string.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR || error == ELOOP) {
      return absl::NotFoundError(absl::StrFormat(
          "no revision \"%s\" in %s (each revision is a directory there)", name, path_));
    }
    return base::ErrnoStatus(error, absl::StrFormat("revision %s in %s", name, path_));
  }
  return fd;
}

absl::StatusOr<std::string> RevisionRepo::Newest() const {
  base::UniqueFd listing(::openat(fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  DIR* dir = listing.valid() ? ::fdopendir(listing.get()) : nullptr;
  if (dir == nullptr) return base::ErrnoStatus(errno, absl::StrFormat("listing %s", path_));
  listing.release();
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir)) {
    if (IsPlainName(entry->d_name) && IsDirectory(::dirfd(dir), *entry)) {
      names.emplace_back(entry->d_name);
    }
  }
  ::closedir(dir);
  if (names.empty()) {
    return absl::NotFoundError(
        absl::StrFormat("%s holds no revision: make one directory per revision there", path_));
  }
  return *std::max_element(names.begin(), names.end(), VersionLess);
}

Publisher::Publisher(RevisionRepo repo, std::string current, InodeTable& table, Notifier& notifier)
    : repo_(std::move(repo)), table_(table), notifier_(notifier), current_(std::move(current)) {}

absl::StatusOr<PublishReport> Publisher::Publish(std::string_view revision,
                                                 InvalidationMethod method) {
  absl::StatusOr<base::UniqueFd> root = repo_.OpenRevision(revision);
  if (!root.ok()) return root.status();
  absl::MutexLock lock(&mutex_);
  PublishReport report{std::string(revision), method, {}, {}};
  const base::Stopwatch stopwatch;
  const KernelCache cache = table_.ReplaceRoot(std::move(*root));
  current_ = std::string(revision);
  if (note_) note_(current_);
  report.switch_time = stopwatch.elapsed();
  absl::StatusOr<InvalidationReport> invalidation = Invalidate(notifier_, cache, method);
  if (!invalidation.ok()) {
    return absl::Status(invalidation.status().code(),
                        absl::StrFormat("now serving %s, but the kernel may still hold the old "
                                        "revision: %s",
                                        revision, invalidation.status().message()));
  }
  report.invalidation = *invalidation;
  return report;
}

void Publisher::NoteEachSwitch(std::function<void(const std::string&)> note) {
  absl::MutexLock lock(&mutex_);
  note_ = std::move(note);
  note_(current_);
}

std::string Publisher::current() const {
  absl::MutexLock lock(&mutex_);
  return current_;
}

}  // namespace ringfuse::daemon
