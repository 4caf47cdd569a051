// Other users for the multi-user tests: a forked child takes a user's ids, groups and capabilities
// and makes one step as that user.
#pragma once

#include <grp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <functional>
#include <vector>

#include "daemon/access/credentials.h"
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

// Gives the calling thread, and only it, `user`'s ids and groups: raw syscalls, since glibc's
// wrappers make every thread of the process follow.
inline bool SetThreadIds(const User& user) {
  return ::syscall(SYS_setgroups, user.groups.size(), user.groups.data()) == 0 &&
         ::syscall(SYS_setresgid, user.gid, user.gid, user.gid) == 0 &&
         ::syscall(SYS_setresuid, user.uid, user.uid, user.uid) == 0;
}

// Turns between the two threads of AsThreadBeside's child, in order.
enum class Turn { kStarted, kLeaderSet, kThreadDone, kThreadMayEnd };

// The two threads share errno (below): each waits for its turn by yielding, which cannot fail,
// never by a futex call, which may set errno while the other's step reads it.
struct ThreadBeside {
  const User& thread;
  bool in_leader;
  const std::function<int()>& step;
  std::atomic<Turn> turn{Turn::kStarted};
  int result = 0;

  void Reach(Turn next) { turn.store(next); }
  void Await(Turn reached) const {
    while (turn.load() < reached) ::sched_yield();
  }
  static int Run(void* argument) {
    ThreadBeside& self = *static_cast<ThreadBeside*>(argument);
    self.Await(Turn::kLeaderSet);  // the step must run while the two differ
    const bool set = SetThreadIds(self.thread);
    self.result = !set ? 200 : self.in_leader ? 0 : self.step() == 0 ? 0 : errno;
    self.Reach(Turn::kThreadDone);
    self.Await(Turn::kThreadMayEnd);
    return 0;
  }
};

// The second thread's stack: each forked child has its own copy.
alignas(64) inline char thread_beside_stack[1 << 20];

// Runs `step` in a second thread of a child whose threads hold different credentials: the
// thread group leader is `leader`, the second thread `thread`. `step` runs in the second thread
// (`in_leader` false) or in the leader while the second thread lives on as `thread`. Returns its
// errno, 0 for success.
//
// The child allocates nothing (see RunInChild), so the second thread is a raw clone(2), not a
// pthread: pthread_create allocates (the thread's TLS block; ASan's record of the thread), and
// an allocator lock that a daemon thread held at the fork stays held in the child forever. It
// shares the leader's TLS, errno included (ThreadBeside waits accordingly), and the kernel
// clears `alive` when it exits (CLONE_CHILD_CLEARTID).
inline int AsThreadBeside(const User& leader, const User& thread, bool in_leader,
                          const std::function<int()>& step) {
  return RunInChild([&] {
    ::umask(022);
    ThreadBeside beside{thread, in_leader, step};
    constexpr int kThread = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                            CLONE_SYSVSEM | CLONE_CHILD_CLEARTID;
    volatile pid_t alive = 1;
    if (::clone(ThreadBeside::Run, thread_beside_stack + sizeof(thread_beside_stack), kThread,
                &beside, nullptr, nullptr, const_cast<pid_t*>(&alive)) < 0) {
      return 201;
    }
    const bool set = SetThreadIds(leader);
    beside.Reach(Turn::kLeaderSet);
    beside.Await(Turn::kThreadDone);
    int result = set ? beside.result : 200;
    if (result == 0 && in_leader) result = step() == 0 ? 0 : errno;
    beside.Reach(Turn::kThreadMayEnd);
    while (alive != 0) ::sched_yield();
    return result;
  });
}

}  // namespace ringfuse::daemon
