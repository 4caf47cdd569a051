#include "daemon/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

#include <cerrno>

#include "absl/strings/str_format.h"
#include "transport/errno_status.h"
#include "transport/fd.h"

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

}  // namespace

// posix_spawn rather than fork: this process has threads, and between fork and exec only
// async-signal-safe code may run.
absl::StatusOr<pid_t> SpawnWithSocket(const Program& program, std::string_view fd_option,
                                      int socket, bool new_session) {
  // Open only for the spawn: the copy the child inherits.
  const internal::UniqueFd inheritable(::fcntl(socket, F_DUPFD_CLOEXEC, 3));
  if (!inheritable.valid()) return internal::ErrnoStatus(errno, "duplicating the socket");
  std::vector<std::string> args = program.argv;
  args.push_back(std::string(fd_option) + std::to_string(inheritable.get()));
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const SpawnAttributes attributes(new_session);
  const ChildFileActions actions(program.directory, inheritable.get());
  pid_t pid = -1;
  const int error = ::posix_spawnp(&pid, program.binary.c_str(), actions.get(), attributes.get(),
                                   argv.data(), environ);
  if (error != 0) {
    return internal::ErrnoStatus(
        error, program.directory.empty()
                   ? absl::StrFormat("starting %s", program.binary)
                   : absl::StrFormat("starting %s in %s", program.binary, program.directory));
  }
  return pid;
}

}  // namespace ringfuse::daemon
