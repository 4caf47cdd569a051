// A process in user namespaces of its own, as a rootless container's: made by an ordinary user,
// nested `depth` deep, alive until the object goes. For tests of what the daemon charges to whom.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>

#include "tests/daemon/child_process.h"

namespace ringfuse::daemon {

class UserNamespaceProcess {
  // Writes `text` to /proc/self/`file` in one write(2), as the kernel takes id maps.
  static bool WriteSelf(const char* file, const char* text) {
    const int fd = ::open(file, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const size_t size = std::strlen(text);
    const bool written = ::write(fd, text, size) == static_cast<ssize_t>(size);
    return ::close(fd) == 0 && written;
  }
  static bool MapOwnIds(const char* map) {
    return WriteSelf("/proc/self/uid_map", map) && WriteSelf("/proc/self/setgroups", "deny") &&
           WriteSelf("/proc/self/gid_map", map);
  }

 public:
  // A child that takes uid and gid `owner` (no groups) and then unshares its user namespace
  // `depth` times. Only system calls in the child (RunInChild).
  UserNamespaceProcess(uid_t owner, int depth) {
    int ends[2];  // the child says whether it is made, then reads until the parent's end closes
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) return;
    parent_end_ = ends[0];
    const int child_end = ends[1];
    // Each level maps its root to the creator's uid and gid in the level above (which an
    // ordinary user may do for itself), so that the next level can be made.
    char first[32], deeper[] = "0 0 1\n";
    std::snprintf(first, sizeof(first), "0 %u 1\n", owner);
    child_.emplace(
        [=] {
          bool made = ::syscall(SYS_setgroups, 0, nullptr) == 0 &&
                      ::syscall(SYS_setresgid, owner, owner, owner) == 0 &&
                      ::syscall(SYS_setresuid, owner, owner, owner) == 0 &&
                      ::prctl(PR_SET_DUMPABLE, 1) == 0;  // else /proc/self is root's
          for (int level = 0; made && level < depth; ++level) {
            made = ::unshare(CLONE_NEWUSER) == 0 && MapOwnIds(level == 0 ? first : deeper);
          }
          const char answer = made ? 'y' : 'n';
          if (::write(child_end, &answer, 1) != 1) return 1;
          char ignored;
          return ::read(child_end, &ignored, 1) < 0 ? 1 : 0;
        },
        child_end);
    ::close(child_end);
    char answer = 'n';
    made_ = ::read(parent_end_, &answer, 1) == 1 && answer == 'y';
  }
  ~UserNamespaceProcess() {
    if (parent_end_ >= 0) ::close(parent_end_);
    if (child_) child_->Join(std::chrono::seconds(5));
  }
  UserNamespaceProcess(const UserNamespaceProcess&) = delete;
  UserNamespaceProcess& operator=(const UserNamespaceProcess&) = delete;

  // Whether the child took the owner's ids and its namespaces.
  bool made() const { return made_; }
  pid_t pid() const { return child_ ? child_->pid() : -1; }

 private:
  std::optional<Child> child_;
  int parent_end_ = -1;
  bool made_ = false;
};

}  // namespace ringfuse::daemon
