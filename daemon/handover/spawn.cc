#include "daemon/handover/spawn.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "base/errno_status.h"
#include "base/fd.h"

extern char** environ;

namespace ringfuse::daemon {
namespace {

class SpawnAttributes {
 public:
  explicit SpawnAttributes(bool new_session) {
    posix_spawnattr_init(&attributes_);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes_, &none);
    posix_spawnattr_setsigdefault(&attributes_, &all);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (new_session) flags |= POSIX_SPAWN_SETSID;
    posix_spawnattr_setflags(&attributes_, flags);
  }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attributes_); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;

  const posix_spawnattr_t* get() const { return &attributes_; }

 private:
  posix_spawnattr_t attributes_;
};

// What the child does between fork and exec: changes to `directory` (unless empty) and keeps
// `inherited` open across the exec. The parent's copy stays close-on-exec, so that no other
// thread's spawn meanwhile passes it on; adddup2 of an fd onto itself clears the flag in the
// child alone (glibc 2.29 and later, as POSIX.1-2024 specifies).
class ChildFileActions {
 public:
  ChildFileActions(const std::string& directory, int inherited) {
    posix_spawn_file_actions_init(&actions_);
    if (!directory.empty()) posix_spawn_file_actions_addchdir_np(&actions_, directory.c_str());
    posix_spawn_file_actions_adddup2(&actions_, inherited, inherited);
  }
  ~ChildFileActions() { posix_spawn_file_actions_destroy(&actions_); }
  ChildFileActions(const ChildFileActions&) = delete;
  ChildFileActions& operator=(const ChildFileActions&) = delete;

  const posix_spawn_file_actions_t* get() const { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

// The program's arguments with "<fd_option>N" appended, and the pointers exec takes to them.
class Arguments {
 public:
  Arguments(const Program& program, std::string_view fd_option, int fd) : strings_(program.argv) {
    strings_.push_back(std::string(fd_option) + std::to_string(fd));
    for (std::string& arg : strings_) pointers_.push_back(arg.data());
    pointers_.push_back(nullptr);
  }
  Arguments(const Arguments&) = delete;
  Arguments& operator=(const Arguments&) = delete;

  char* const* get() const { return pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

absl::Status SpawnError(int error, const Program& program) {
  return base::ErrnoStatus(
      error, program.directory.empty()
                 ? absl::StrFormat("starting %s", program.binary)
                 : absl::StrFormat("starting %s in %s", program.binary, program.directory));
}

// What the child of vfork does, all decided beforehand: until it execs it runs on this thread's
// stack and memory, so it makes system calls and writes `error`, nothing else.
struct ExecPlan {
  int executable;
  char* const* argv;
  const char* directory;  // null: this process's
  int inherited;          // to stay open across the exec
  bool new_session;
  int error = 0;  // why the child could not start the program
};

// The kernel's struct sigaction, all zero: SIG_DFL, no flags, nothing blocked in the handler.
struct KernelSigaction {
  unsigned long handler, flags, restorer, mask;
};
constexpr KernelSigaction kDefaultAction{};
constexpr uint64_t kNoSignals = 0;  // the kernel's sigset_t: 64 bits

// As posix_spawn with SETSIGDEF for every signal and SETSIGMASK empty: no handler of this process
// may run in the child (it would run on this process's memory), and the program starts with no
// signal blocked or ignored.
[[noreturn]] void ExecPlanned(ExecPlan& plan) {
  for (int signal = 1; signal < NSIG; ++signal) {
    ::syscall(SYS_rt_sigaction, signal, &kDefaultAction, nullptr, sizeof(kNoSignals));
  }
  if (plan.new_session) ::setsid();
  if (plan.directory != nullptr && ::chdir(plan.directory) != 0) {
    plan.error = errno;
    ::_exit(127);
  }
  ::fcntl(plan.inherited, F_SETFD, 0);  // the child's copy of the fd table alone
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &kNoSignals, nullptr, sizeof(kNoSignals));
  ::execveat(plan.executable, "", plan.argv, environ, AT_EMPTY_PATH);
  plan.error = errno;
  ::_exit(127);
}

// vfork: the parent waits until the child has exec'd or exited, so `plan.error` is known when it
// returns. Every signal is blocked meanwhile, so that none reaches a handler in the child before
// it has set them all to default.
pid_t StartPlanned(ExecPlan& plan) {
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  const pid_t pid = ::vfork();
  if (pid == 0) ExecPlanned(plan);
  const int error = errno;
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  errno = error;
  return pid;
}

}  // namespace

// posix_spawn rather than fork: this process has threads, and between fork and exec only
// async-signal-safe code may run.
absl::StatusOr<pid_t> SpawnWithSocket(const Program& program, std::string_view fd_option,
                                      int socket, bool new_session) {
  // Open only for the spawn: the copy the child inherits.
  const base::UniqueFd inheritable(::fcntl(socket, F_DUPFD_CLOEXEC, 3));
  if (!inheritable.valid()) return base::ErrnoStatus(errno, "duplicating the socket");
  const Arguments argv(program, fd_option, inheritable.get());
  const SpawnAttributes attributes(new_session);
  const ChildFileActions actions(program.directory, inheritable.get());
  pid_t pid = -1;
  const int error = ::posix_spawnp(&pid, program.binary.c_str(), actions.get(), attributes.get(),
                                   argv.get(), environ);
  if (error != 0) return SpawnError(error, program);
  return pid;
}

// posix_spawn cannot start an fd; execveat can, and names the process after the file (Linux
// 6.14 and later), where exec of /proc/self/fd/N would call it "N". vfork, for the same reason
// posix_spawn uses it: only system calls run between fork and exec.
absl::StatusOr<pid_t> SpawnOpenedWithSocket(int executable, const Program& program,
                                            std::string_view fd_option, int socket,
                                            bool new_session) {
  const base::UniqueFd inheritable(::fcntl(socket, F_DUPFD_CLOEXEC, 3));
  if (!inheritable.valid()) return base::ErrnoStatus(errno, "duplicating the socket");
  const Arguments argv(program, fd_option, inheritable.get());
  ExecPlan plan{executable, argv.get(),
                program.directory.empty() ? nullptr : program.directory.c_str(), inheritable.get(),
                new_session};
  const pid_t pid = StartPlanned(plan);
  if (pid < 0) return base::ErrnoStatus(errno, "vfork");
  if (plan.error == 0) return pid;
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return SpawnError(plan.error, program);
}

}  // namespace ringfuse::daemon
