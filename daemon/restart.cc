#include "daemon/restart.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "daemon/handover_state.h"
#include "daemon/options.h"
#include "transport/errno_status.h"
#include "transport/fd.h"

extern char** environ;

namespace ringfuse::daemon {
namespace {

// The attributes the successor starts with: a session of its own, so that it outlives the
// terminal or service that started this daemon; no signal blocked (StopSignals blocks SIGTERM
// and SIGINT in every thread here, and a mask survives exec) or ignored.
class SpawnAttributes {
 public:
  SpawnAttributes() {
    posix_spawnattr_init(&attributes_);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes_, &none);
    posix_spawnattr_setsigdefault(&attributes_, &all);
    posix_spawnattr_setflags(&attributes_,
                             POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attributes_); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;

  const posix_spawnattr_t* get() const { return &attributes_; }

 private:
  posix_spawnattr_t attributes_;
};

class InDirectory {
 public:
  explicit InDirectory(const std::string& directory) {
    posix_spawn_file_actions_init(&actions_);
    posix_spawn_file_actions_addchdir_np(&actions_, directory.c_str());
  }
  ~InDirectory() { posix_spawn_file_actions_destroy(&actions_); }
  InDirectory(const InDirectory&) = delete;
  InDirectory& operator=(const InDirectory&) = delete;

  const posix_spawn_file_actions_t* get() const { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

// posix_spawn rather than fork: this process has threads, and between fork and exec only
// async-signal-safe code may run.
absl::StatusOr<pid_t> Spawn(const Successor& successor, int takeover_socket) {
  // Every other fd here is close-on-exec; this copy of the socket is the one the successor
  // inherits, open only for the spawn.
  const internal::UniqueFd inheritable(::fcntl(takeover_socket, F_DUPFD, 3));
  if (!inheritable.valid()) return internal::ErrnoStatus(errno, "duplicating the takeover socket");
  std::vector<std::string> args = successor.argv;
  args.push_back(absl::StrCat(kTakeoverFdOption, inheritable.get()));
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const SpawnAttributes attributes;
  const InDirectory actions(successor.directory);
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, successor.binary.c_str(), actions.get(), attributes.get(),
                                  argv.data(), environ);
  if (error != 0) {
    return internal::ErrnoStatus(
        error, absl::StrFormat("starting %s in %s", successor.binary, successor.directory));
  }
  return pid;
}

// Kills a successor that did not take over and says how it ended, for the error.
std::string Reap(pid_t pid, const std::string& binary) {
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string who = absl::StrFormat("the new process (%s, pid %d)", binary, pid);
  if (WIFEXITED(status))
    return absl::StrFormat("%s exited with status %d", who, WEXITSTATUS(status));
  if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
    return absl::StrFormat("%s died of %s", who, ::strsignal(WTERMSIG(status)));
  }
  return absl::StrCat(who, " was killed");
}

}  // namespace

absl::StatusOr<RestartReport> RestartDaemon(const Successor& successor, Session& session,
                                            PassthroughFs& fs, const std::string& revision,
                                            ControlServer& control) {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) {
    return internal::ErrnoStatus(errno, "socketpair for the handover");
  }
  const internal::UniqueFd ours(ends[0]);
  internal::UniqueFd theirs(ends[1]);
  absl::StatusOr<pid_t> pid = Spawn(successor, theirs.get());
  if (!pid.ok()) return pid.status();
  theirs.reset();  // so that a successor that dies shows as the socket's end
  const auto save = [&]() -> absl::StatusOr<HandoverPayload> {
    absl::StatusOr<HandoverPayload> payload = SaveHandoverState(fs, revision);
    if (payload.ok()) payload->fds.push_back(control.listener());
    return payload;
  };
  absl::StatusOr<HandoverReport> handed = session.HandOver(ours.get(), save);
  if (!handed.ok()) {
    return absl::Status(handed.status().code(),
                        absl::StrFormat("handing the mount over failed: %s; %s",
                                        handed.status().message(), Reap(*pid, successor.binary)));
  }
  control.HandOff();
  return RestartReport{*pid, *handed};
}

}  // namespace ringfuse::daemon
