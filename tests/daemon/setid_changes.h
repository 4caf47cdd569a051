// Set-user-ID and set-group-ID bits after a change another user makes, natively and through a
// mount: the changes, made by a child as that user, and the scenario in which the caller owns a
// file or is in its group (passthrough_setid_test.cc, ringfused_setid_test.cc).
//
// The kernel's rules (fs/inode.c, fs/attr.c): a change by a caller without CAP_FSETID always
// clears set-user-ID, and clears set-group-ID where the group may execute or the caller is not
// in the file's group.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "tests/daemon/test_users.h"

namespace ringfuse::daemon::setid {

inline constexpr size_t kBlock = 4096;
alignas(kBlock) inline char block[kBlock];  // static and aligned for O_DIRECT

// One change, made by a child as some user on `path`; `source` is a readable file beside it.
// Returns 0, or -1 with errno.
using Change = int (*)(const std::string& path, const std::string& source);

inline int Closing(int fd, int result) {
  const int error = errno;
  ::close(fd);
  errno = error;
  return result;
}

inline int WriteAt(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), O_WRONLY | flags);
  if (fd < 0) return -1;
  return Closing(fd, ::pwrite(fd, block, kBlock, 0) == kBlock ? 0 : -1);
}

inline int Write(const std::string& path, const std::string&) { return WriteAt(path, 0); }
inline int WriteDirect(const std::string& path, const std::string&) {
  return WriteAt(path, O_DIRECT);
}
inline int Append(const std::string& path, const std::string&) { return WriteAt(path, O_APPEND); }

inline int Truncate(const std::string& path, const std::string&) {
  return ::truncate(path.c_str(), 100);
}

inline int Ftruncate(const std::string& path, const std::string&) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) return -1;
  return Closing(fd, ::ftruncate(fd, 100));
}

inline int OpenTruncating(const std::string& path, const std::string&) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
  return fd < 0 ? -1 : ::close(fd);
}

// Past the end, as `fallocate -o 0 -l 65536` on a file of two blocks.
inline int Fallocate(const std::string& path, const std::string&) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) return -1;
  return Closing(fd, ::fallocate(fd, 0, 0, 16 * kBlock));
}

inline int CopyInto(const std::string& path, const std::string& source) {
  const int in = ::open(source.c_str(), O_RDONLY);
  if (in < 0) return -1;
  const int out = ::open(path.c_str(), O_WRONLY);
  if (out < 0) return Closing(in, -1);
  loff_t in_offset = 0, out_offset = 0;
  const ssize_t copied = ::copy_file_range(in, &in_offset, out, &out_offset, kBlock, 0);
  return Closing(in, Closing(out, copied == kBlock ? 0 : -1));
}

// Opening for writing changes nothing: the bits stay until a change is made.
inline int OpenOnly(const std::string& path, const std::string&) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  return fd < 0 ? -1 : ::close(fd);
}

struct NamedChange {
  const char* name;
  Change change;
  // Whether the request tells the daemon that the caller lacks CAP_FSETID (KILL_SUIDGID):
  // FALLOCATE and COPY_FILE_RANGE do not, and the daemon takes every non-root caller to lack it.
  bool says_fsetid = true;
};

// Root makes `path`, two blocks long, owned by `uid`:`gid` with `mode`.
inline int RootMakes(const std::string& path, uid_t uid, gid_t gid, mode_t mode) {
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
  if (fd < 0) return -1;
  const bool filled =
      ::pwrite(fd, block, kBlock, 0) == kBlock && ::pwrite(fd, block, kBlock, kBlock) == kBlock;
  return Closing(fd, filled && ::fchown(fd, uid, gid) == 0 && ::fchmod(fd, mode) == 0 ? 0 : -1);
}

// The mode as `stat -c %a` reads it: statx for STATX_MODE alone, which the kernel may answer
// from what it caches, where stat(2) asks for every basic attribute.
inline std::string StatxModeOf(const std::string& path) {
  struct statx stx {};
  if (::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW, STATX_MODE, &stx) != 0) {
    return strerrorname_np(errno);
  }
  return absl::StrFormat("%04o", stx.stx_mode & 07777);
}

// "native | through the mount" for each outcome that differs; empty when all are the same.
inline std::vector<std::string> Differences(const std::vector<std::string>& native,
                                            const std::vector<std::string>& mounted) {
  std::vector<std::string> differences;
  for (size_t i = 0; i < std::max(native.size(), mounted.size()); ++i) {
    const std::string left = i < native.size() ? native[i] : "(none)";
    const std::string right = i < mounted.size() ? mounted[i] : "(none)";
    if (left != right) differences.push_back(left + " | " + right);
  }
  return differences;
}

// The caller of the scenario below: it owns some files and is in the group of others.
inline constexpr gid_t kCallersGroup = 4200;
inline const User kCaller{4242, 4242, {4242, kCallersGroup}};

// The files a change is made on, made by root directly in the directory (so, for a mount, behind
// the daemon's back), in each combination of user and group execute (kExecBits):
// - the caller's own, mode 0644, which the caller makes set-user-ID and set-group-ID itself
//   (chmod ug+s) before the change: natively -rwSr-Sr-- becomes -rw-r-Sr--;
// - root's, in the caller's group, mode 06665 (06775 with both execute bits).
struct FileKind {
  const char* name;
  uid_t uid;
  gid_t gid;
  mode_t mode;
  bool caller_sets_ids;
};
inline const FileKind kFileKinds[] = {
    {"own", kCaller.uid, kCaller.gid, 0644, true},
    {"group's", 0, kCallersGroup, 06665, false},
};
inline constexpr mode_t kExecBits[] = {0, S_IXUSR, S_IXGRP, S_IXUSR | S_IXGRP};

// Every change whose reply carries no attributes, and truncate, whose reply does.
inline const NamedChange kChangesSeenAtOnce[] = {
    {"write", Write},
    {"write O_DIRECT", WriteDirect},
    {"truncate", Truncate},
    {"open O_TRUNC", OpenTruncating},
    {"fallocate", Fallocate, false},
    {"copy_file_range", CopyInto, false},
};

inline std::string CaseName(const NamedChange& change, const FileKind& kind, mode_t mode) {
  return absl::StrFormat("%s, %s %04o", change.name, kind.name, mode);
}
inline std::string CaseFile(size_t change, size_t kind, mode_t mode) {
  return absl::StrFormat("c%zu-k%zu-%o", change, kind, mode);
}

// Calls `visit(change, kind, mode, file name)` for every case of the scenario, in one order.
template <typename Visit>
void ForEachCase(Visit visit) {
  for (size_t c = 0; c < std::size(kChangesSeenAtOnce); ++c) {
    for (size_t k = 0; k < std::size(kFileKinds); ++k) {
      for (const mode_t exec : kExecBits) {
        const mode_t mode = kFileKinds[k].mode | exec;
        visit(kChangesSeenAtOnce[c], kFileKinds[k], mode, CaseFile(c, k, mode));
      }
    }
  }
}

// As kCaller: makes `path` (of `kind`, `mode`) set-ID first where the kind says so, then the
// change. Returns its errno, 0 for success.
inline int CallerChanges(const NamedChange& change, const FileKind& kind, mode_t mode,
                         const std::string& path, const std::string& source) {
  return As(kCaller, [&] {
    if (kind.caller_sets_ids && ::chmod(path.c_str(), mode | S_ISUID | S_ISGID) != 0) return -1;
    return change.change(path, source);
  });
}

// Root makes each case's file in `made_in`; kCaller changes it through `used_in` (the same
// directory, or a mount of it), where the mode is read back at once. Returns "change, kind mode:
// errno mode after" for each case.
inline std::vector<std::string> SeenAtOnce(const std::string& made_in, const std::string& used_in) {
  std::vector<std::string> outcomes;
  const std::string source = "source-of-copies";
  if (RootMakes(made_in + "/" + source, 0, 0, 0644) != 0) return {"root cannot make " + source};
  ForEachCase(
      [&](const NamedChange& change, const FileKind& kind, mode_t mode, const std::string& name) {
        const std::string path = used_in + "/" + name;
        const int error = RootMakes(made_in + "/" + name, kind.uid, kind.gid, mode) != 0
                              ? errno
                              : CallerChanges(change, kind, mode, path, used_in + "/" + source);
        outcomes.push_back(absl::StrFormat("%s: %s %s", CaseName(change, kind, mode),
                                           error == 0 ? "ok" : strerrorname_np(error),
                                           StatxModeOf(path)));
      });
  return outcomes;
}

// The modes of the files SeenAtOnce made in `made_in`, in its order.
inline std::vector<std::string> ModesMadeIn(const std::string& made_in) {
  std::vector<std::string> modes;
  ForEachCase([&](const NamedChange&, const FileKind&, mode_t, const std::string& name) {
    modes.push_back(StatxModeOf(made_in + "/" + name));
  });
  return modes;
}

// What a native run of SeenAtOnce itself must show, so that both runs cannot be wrong together.
inline const std::vector<std::string> kSeenAtOnceRules = {
    "write O_DIRECT, own 0644: ok 2644",       // -rwSr-Sr-- becomes -rw-r-Sr--
    "write O_DIRECT, own 0654: ok 0654",       // group-executable: set-group-ID goes too
    "fallocate, group's 6775: ok 0775",        // a member of the group: both go
    "copy_file_range, group's 6665: ok 2665",  // not group-executable: set-group-ID stays
    "open O_TRUNC, group's 6765: ok 2765",
};

}  // namespace ringfuse::daemon::setid
