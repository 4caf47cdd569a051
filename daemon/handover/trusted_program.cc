#include "daemon/handover/trusted_program.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/errno_status.h"

namespace ringfuse::daemon {
namespace {

constexpr int kMaxLinks = 40;  // the kernel's own bound before ELOOP

std::string ForeignOwner(const struct stat& st) {
  if (st.st_uid == 0 || st.st_uid == ::geteuid()) return "";
  return absl::StrFormat("belongs to uid %u", st.st_uid);
}

// Whether `st` is a directory where others may add names but not rename or remove those of
// anyone else (the sticky bit: /tmp). What is found there is as safe as its own owner, so
// every name looked up in it, a link's too, must be root's or this user's (ForeignOwner).
bool IsSticky(const struct stat& st) { return S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX); }

// Why someone this process does not trust could replace what `st` describes; "" if no one can.
// An ACL that lets a named user or group write shows in the group bits, which hold its mask.
std::string WhoElseCanWrite(const struct stat& st) {
  if (std::string foreign = ForeignOwner(st); !foreign.empty()) return foreign;
  if (IsSticky(st)) return "";
  if ((st.st_mode & S_IWOTH) != 0) return "is writable by everyone";
  if ((st.st_mode & S_IWGRP) != 0) return absl::StrFormat("is writable by group %u", st.st_gid);
  return "";
}

std::string WhomThisTrusts() {
  const uid_t self = ::geteuid();
  if (self == 0) return "a root daemon runs no program that anyone else could replace";
  return absl::StrFormat(
      "ringfused (uid %u) runs no program that anyone but it and root could "
      "replace",
      self);
}

std::string Join(const std::string& directory, const std::string& name) {
  return directory == "/" ? absl::StrCat("/", name) : absl::StrCat(directory, "/", name);
}

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// One resolution of the program's path: the directory reached (checked, and held open so that
// no rename elsewhere moves the walk), and the names still to look up in it and below.
class Resolution {
 public:
  explicit Resolution(const std::string& program) : program_(program) {
    Push(absl::string_view(program.data(), program.size()));
  }

  absl::StatusOr<base::UniqueFd> Run() {
    if (absl::Status root = EnterRoot(); !root.ok()) return root;
    while (!left_.empty()) {
      const std::string name = std::move(left_.back());
      left_.pop_back();
      absl::StatusOr<base::UniqueFd> file = Step(name);
      if (!file.ok() || file->valid()) return file;
    }
    return Failed(EISDIR, directory_path_);
  }

 private:
  // Queues the names in `path` to be looked up before those queued already.
  void Push(absl::string_view path) {
    const std::vector<absl::string_view> names = absl::StrSplit(path, '/', absl::SkipEmpty());
    for (auto name = names.rbegin(); name != names.rend(); ++name) {
      if (*name != ".") left_.emplace_back(name->data(), name->size());
    }
  }

  absl::Status EnterRoot() {
    base::UniqueFd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    struct stat st {};
    if (!root.valid() || ::fstat(root.get(), &st) != 0) return Failed(errno, "/");
    if (absl::Status trusted = Check(st, "/"); !trusted.ok()) return trusted;
    directory_ = std::move(root);
    directory_path_ = "/";
    directory_sticky_ = IsSticky(st);
    return absl::OkStatus();
  }

  // Looks `name` up without following it: a directory is entered, a link's target queued, and
  // the file returned if it is the last name; an invalid fd means "go on".
  absl::StatusOr<base::UniqueFd> Step(const std::string& name) {
    const std::string path = name == ".." ? Parent(directory_path_) : Join(directory_path_, name);
    base::UniqueFd found(::openat(directory_.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!found.valid() || ::fstat(found.get(), &st) != 0) return Failed(errno, path);
    if (S_ISLNK(st.st_mode)) {
      // A link cannot be changed, only replaced: its owner matters only where that is all its
      // directory stops (sticky), else the directory, checked already, allows no one untrusted.
      if (const std::string foreign = ForeignOwner(st); directory_sticky_ && !foreign.empty()) {
        return Refused(path, foreign);
      }
      if (absl::Status followed = Follow(found.get(), path); !followed.ok()) return followed;
      return base::UniqueFd();
    }
    if (absl::Status trusted = Check(st, path); !trusted.ok()) return trusted;
    if (S_ISDIR(st.st_mode)) {
      directory_ = std::move(found);
      directory_path_ = path;
      directory_sticky_ = IsSticky(st);
      return base::UniqueFd();
    }
    if (!left_.empty()) return Failed(ENOTDIR, path);
    return found;
  }

  absl::Status Follow(int link, const std::string& path) {
    if (++links_ > kMaxLinks) return Failed(ELOOP, path);
    char target[PATH_MAX];
    const ssize_t size = ::readlinkat(link, "", target, sizeof(target));
    if (size < 0) return Failed(errno, path);
    if (static_cast<size_t>(size) == sizeof(target)) return Failed(ENAMETOOLONG, path);
    Push(absl::string_view(target, static_cast<size_t>(size)));
    return size > 0 && target[0] == '/' ? EnterRoot() : absl::OkStatus();
  }

  absl::Status Check(const struct stat& st, const std::string& path) const {
    const std::string who = WhoElseCanWrite(st);
    return who.empty() ? absl::OkStatus() : Refused(path, who);
  }

  absl::Status Refused(const std::string& path, const std::string& who) const {
    return absl::PermissionDeniedError(
        absl::StrFormat("will not run %s: %s %s; %s", program_, path, who, WhomThisTrusts()));
  }

  absl::Status Failed(int error, const std::string& path) const {
    return base::ErrnoStatus(error, path == program_
                                        ? absl::StrCat("starting ", program_)
                                        : absl::StrFormat("starting %s: %s", program_, path));
  }

  const std::string& program_;
  std::vector<std::string> left_;  // the next name last
  base::UniqueFd directory_;
  std::string directory_path_;
  bool directory_sticky_ = false;
  int links_ = 0;
};

}  // namespace

absl::StatusOr<base::UniqueFd> OpenTrustedProgram(const std::string& program) {
  if (!program.starts_with('/')) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the program's path must be absolute, not \"%s\"", program));
  }
  return Resolution(program).Run();
}

}  // namespace ringfuse::daemon
