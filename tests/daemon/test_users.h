// Other users for the multi-user tests: a forked child takes a user's ids, groups and capabilities
// and makes one step as that user.
#pragma once

#include <grp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <vector>

#include "daemon/credentials.h"
#include "tests/daemon/child_process.h"

namespace ringfuse::daemon {

struct User {
  uid_t uid;
  gid_t gid;
  std::vector<gid_t> groups;
  uint64_t capabilities = 0;  // kept through setuid, as a file capability would give them
};

inline constexpr gid_t kShared = 2100;   // alice's supplementary group
inline constexpr gid_t kForeign = 3100;  // nobody's
inline const User kAlice{1101, 1101, {1101, kShared}};
inline const User kBob{1102, 1102, {1102}};

// Runs `step` as `user` in a child; returns its errno, 0 for success.
inline int As(const User& user, const std::function<int()>& step) {
  return RunInChild([&] {
    if (user.capabilities != 0 && ::prctl(PR_SET_KEEPCAPS, 1) != 0) return 200;
    if (::setgroups(user.groups.size(), user.groups.data()) != 0 || ::setgid(user.gid) != 0 ||
        ::setuid(user.uid) != 0) {
      return 200;
    }
    if (user.capabilities != 0 &&
        !SetThreadCapabilities({user.capabilities, user.capabilities, 0})) {
      return 200;
    }
    ::umask(022);
    return step() == 0 ? 0 : errno;
  });
}

}  // namespace ringfuse::daemon
