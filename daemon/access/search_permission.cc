#include "daemon/access/search_permission.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "daemon/access/credentials.h"

namespace ringfuse::daemon {
namespace {

constexpr mode_t kEveryoneSearches = S_IXUSR | S_IXGRP | S_IXOTH;

// getxattrat(2) (Linux 6.13): the only xattr call that takes an O_PATH fd without a path
// string (fgetxattr refuses O_PATH, /proc/self/fd/N costs a path walk, ~8 times as long). Not in
// this C library's headers yet; new system calls share one number on every architecture.
#ifdef SYS_getxattrat
constexpr long kGetxattrat = SYS_getxattrat;
#else
constexpr long kGetxattrat = 464;
#endif

struct XattrArgs {
  uint64_t value = 0;
  uint32_t size = 0;
  uint32_t flags = 0;
};

// Whether `dir_fd` may have an access ACL: only a definite "none" (no such attribute, or no
// ACL support) says no. "." is the directory itself, reached without following anything.
bool MayHaveAcl(int dir_fd) {
  XattrArgs args;
  if (::syscall(kGetxattrat, dir_fd, ".", 0, "system.posix_acl_access", &args, sizeof(args)) >= 0) {
    return true;
  }
  return errno != ENODATA && errno != EOPNOTSUPP;
}

bool EveryoneMaySearch(int dir_fd, const struct stat& st) {
  return (st.st_mode & kEveryoneSearches) == kEveryoneSearches && !MayHaveAcl(dir_fd);
}

base::Errno KernelSaysCallerMaySearch(const RequestContext& context, int dir_fd) {
  const auto may_search = [&] {
    return base::Errno::OfCall(::faccessat(dir_fd, "", X_OK, AT_EMPTY_PATH | AT_EACCESS));
  };
  return CallAsCaller(context, kCreatesNothing, may_search, 0, {dir_fd});
}

}  // namespace

bool KernelChecksWalksThrough(const DaemonOptions& options, int dir_fd) {
  if (!options.mount.allow_other) return true;
  return options.mount.default_permissions ? !MayHaveAcl(dir_fd) : EveryoneMaySearch(dir_fd);
}

bool EveryoneMaySearch(int dir_fd) {
  struct stat st;
  return ::fstat(dir_fd, &st) == 0 && EveryoneMaySearch(dir_fd, st);
}

// The shortcuts save ActAsCaller's read of /proc/<pid>/status (~8 us) and its credential
// switches (~1 us each), more than the rest of a LOOKUP, where the outcome cannot depend on them.
// The owner's right is the mode's even with an ACL. A race with a chmod gives the answer from just
// before it.
base::Errno CallerMaySearch(const RequestContext& context, int dir_fd) {
  if (context.uid() == 0) return base::Errno();
  struct stat st;
  if (::fstat(dir_fd, &st) != 0) return base::Errno::Last();
  if (st.st_uid == context.uid() && (st.st_mode & S_IXUSR)) return base::Errno();
  if (EveryoneMaySearch(dir_fd, st)) return base::Errno();
  return KernelSaysCallerMaySearch(context, dir_fd);
}

}  // namespace ringfuse::daemon
