// ringfused: serves a directory (passthrough, read-write) or one revision of a repository of
// revisions (read-only, switched by `ringfuse-ctl publish`) through the ringfuse library.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/errno_status.h"
#include "daemon/access/credentials.h"
#include "daemon/daemon.h"
#include "daemon/detach.h"
#include "daemon/handover/spawn.h"
#include "daemon/inodes/mutex_mode.h"
#include "daemon/options.h"
#include "ringfuse/json_trace.h"
#include "ringfuse/log.h"
#include "ringfuse/session.h"
#include "ringfuse/signals.h"

namespace ringfuse::daemon {
namespace {

// The daemon is told every path before it changes directory (when detaching), so it keeps them
// absolute; realpath also names a missing SOURCE or MOUNTPOINT precisely.
absl::Status MakeAbsolute(std::string& path, std::string_view what) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return base::ErrnoStatus(errno, absl::StrFormat("%s %s", what, path));
  path = resolved;
  ::free(resolved);
  return absl::OkStatus();
}

// `path` from the working directory, without looking at anything it names.
std::string Lexically(const std::string& path) {
  if (path.starts_with('/')) return path;
  char* directory = ::getcwd(nullptr, 0);
  if (directory == nullptr) return path;
  std::string absolute = absl::StrCat(directory, "/", path);
  ::free(directory);
  return absolute;
}

// Services start with a soft fd limit of 1024 while the hard limit allows far more: the daemon
// takes what it may, since every open file of every client is one of its fds.
void RaiseFdLimit() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &limit);  // cannot fail: the soft limit only rises to the hard one
}

// A daemon that cannot act as its callers makes every change as its own user, which is fine for
// its own user alone; other users (allow_other) would act with its rights unless the kernel
// checks them first. Says so at start, since it changes who owns what the mount creates. And
// one that cannot read its callers' groups refuses more than the kernel would (credentials.h).
absl::Status CheckCallerIdentity(const DaemonOptions& options, std::string_view program) {
  if (CanActAsCallers()) {
    if (options.mount.allow_other && !ProcNamesRequestPids()) {
      std::fprintf(stderr,
                   "%s: /proc counts pids in another pid namespace than this daemon's: other "
                   "users' supplementary groups cannot be read, so an access that a group could "
                   "deny (group bits or an ACL group entry below the other bits) is refused "
                   "with EACCES\n",
                   std::string(program).c_str());
    }
    return absl::OkStatus();
  }
  if (options.mount.allow_other && !options.mount.default_permissions) {
    return absl::FailedPreconditionError(
        "without CAP_SETUID and CAP_SETGID every operation is made as this daemon's user, so -o "
        "allow_other needs -o default_permissions for the kernel to check the other users");
  }
  std::fprintf(stderr,
               "%s: no CAP_SETUID and CAP_SETGID (not root): every operation is made as uid %u, "
               "whoever the caller is\n",
               std::string(program).c_str(), static_cast<unsigned>(::getuid()));
  return absl::OkStatus();
}

// A daemon started by restart: its predecessor's standard streams, and its working directory
// (for the command line's relative paths), which a detached daemon leaves once started.
void SettleTakenOver(const DaemonOptions& options, const Session& session,
                     std::string_view program) {
  std::fprintf(stderr, "%s: took over %s (ringfuse-ctl restart); %s\n",
               std::string(program).c_str(), session.mountpoint().c_str(),
               session.transport_choice().c_str());
  if (!options.foreground && ::chdir("/") != 0) {
    LogLine(LogLevel::kWarning, "cannot change directory to /");
  }
}

// "PROGRAM: TEXT" on stderr: what the daemon tells whoever started it.
void Say(std::string_view program, absl::string_view text) {
  std::fprintf(stderr, "%s: %s\n", std::string(program).c_str(), std::string(text).c_str());
}

// Opened before detaching, so that a relative FILE is where the user meant and a bad one fails
// in the foreground; its writer thread starts after, since threads do not survive the fork.
// A restarted daemon appends to the trace its predecessor wrote, rather than starting it over;
// so does a kept one, which may be the one started again after a crash.
absl::StatusOr<base::UniqueFd> OpenTraceFile(const DaemonOptions& options) {
  if (options.trace.empty()) return base::UniqueFd();
  const bool first = options.takeover_fd < 0 && options.keeper_fd < 0;
  absl::StatusOr<int> opened = first ? JsonTraceWriter::CreateFile(options.trace)
                                     : JsonTraceWriter::AppendFile(options.trace);
  if (!opened.ok()) return opened.status();
  return base::UniqueFd(*opened);
}

// The line that says the mount is served, for a daemon started in the foreground.
void SayServing(const DaemonOptions& options, const Session& session, std::string_view program) {
  if (options.takeover_fd >= 0) return SettleTakenOver(options, session, program);
  if (session.incarnation() > 0) {
    return Say(program, absl::StrFormat("recovered %s after a crash (incarnation %u); %s",
                                        session.mountpoint(), session.incarnation(),
                                        session.transport_choice()));
  }
  Say(program, session.transport_choice());
}

// Once the session is over: why, and the exit status that says it.
int Ended(const Daemon& daemon, std::string_view program) {
  if (daemon.successor_pid() != 0) {
    Say(program,
        absl::StrFormat("%s is served by pid %d now (ringfuse-ctl restart); exiting",
                        daemon.session().mountpoint(), static_cast<int>(daemon.successor_pid())));
    return 0;
  }
  if (daemon.session().aborted()) {
    Say(program, absl::StrFormat(
                     "the kernel aborted the connection to %s: a request went unanswered past "
                     "-o request_timeout, or someone aborted it through /sys/fs/fuse/connections; "
                     "unmounted",
                     daemon.session().mountpoint()));
    return 1;
  }
  return 0;
}

int Run(const DaemonOptions& options, Program successor, std::string_view program) {
  StopSignals signals;  // before any thread exists
  RaiseFdLimit();       // before the inode table sizes itself from it
  if (absl::Status identity = CheckCallerIdentity(options, program); !identity.ok()) {
    Say(program, identity.message());
    return 1;
  }
  SetLogLevel(options.debug ? LogLevel::kDebug : LogLevel::kWarning);
  absl::StatusOr<base::UniqueFd> trace_file = OpenTraceFile(options);
  if (!trace_file.ok()) {
    Say(program, trace_file.status().message());
    return 1;
  }
  std::optional<DetachedDaemon> detached;
  // A successor is detached already: its predecessor's streams, in a session of its own.
  if (!options.foreground && options.takeover_fd < 0) {
    absl::StatusOr<DetachedDaemon> daemon = Detach(program);
    if (!daemon.ok()) {
      Say(program, daemon.status().message());
      return 1;
    }
    detached.emplace(std::move(*daemon));
  }
  absl::StatusOr<std::unique_ptr<Daemon>> daemon =
      Daemon::Start(options, *std::move(trace_file), std::move(successor), program);
  if (!daemon.ok()) {
    if (detached) {
      detached->Failed(std::string(daemon.status().message()));  // the waiting command prints it
    } else {
      Say(program, daemon.status().message());
    }
    return 1;
  }
  if (detached) {
    detached->Ready();
  } else {
    SayServing(options, (*daemon)->session(), program);
  }
  signals.Wait((*daemon)->session());
  (*daemon)->StopControl();
  return Ended(**daemon, program);
}

// What restart starts: the program at the path this one was started from (so that an upgrade
// installed there is what runs next), with this command line, from this directory.
Program SuccessorOf(int argc, char** argv) {
  Program successor;
  if (char* self = ::realpath("/proc/self/exe", nullptr); self != nullptr) {
    successor.binary = self;
    ::free(self);
  }
  for (int i = 0; i < argc; ++i) {
    if (!std::string_view(argv[i]).starts_with(kTakeoverFdOption))
      successor.argv.push_back(argv[i]);
  }
  if (char* directory = ::getcwd(nullptr, 0); directory != nullptr) {
    successor.directory = directory;
    ::free(directory);
  }
  return successor;
}

}  // namespace
}  // namespace ringfuse::daemon

int main(int argc, char** argv) {
  using namespace ringfuse::daemon;
  TurnOffMutexDeadlockGraph();
  const std::string_view program = "ringfused";
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  absl::StatusOr<DaemonOptions> options = ParseDaemonArgs(args);
  if (!options.ok()) {
    std::fprintf(stderr, "ringfused: %s\n", std::string(options.status().message()).c_str());
    return 2;
  }
  if (options->help) {
    std::fputs(Usage(program).c_str(), stdout);
    return 0;
  }
  if (options->takeover_fd >= 0 && options->keeper_fd >= 0) {
    std::fputs("ringfused: --takeover-fd and --keeper-fd exclude each other\n", stderr);
    return 2;
  }
  // Inherited for this process alone: a program it starts later (a restart's successor, which
  // gets a socket of its own) must not hold its predecessor's or its keeper's socket.
  for (const int inherited : {options->takeover_fd, options->keeper_fd}) {
    if (inherited >= 0) ::fcntl(inherited, F_SETFD, FD_CLOEXEC);
  }
  std::vector<std::pair<std::string*, const char*>> paths = {{&options->source, "source"}};
  // A successor gets the mountpoint with the connection; looking it up would wait on the mount,
  // paused until this very process serves it. So would a kept daemon started after a crash,
  // which learns that only from its keeper: mounting resolves the path itself.
  if (options->keeper_fd >= 0) {
    options->mount.mountpoint = Lexically(options->mount.mountpoint);
  } else if (options->takeover_fd < 0) {
    paths.emplace_back(&options->mount.mountpoint, "mountpoint");
  }
  for (auto [path, what] : paths) {
    if (absl::Status status = MakeAbsolute(*path, what); !status.ok()) {
      std::fprintf(stderr, "ringfused: %s\n", std::string(status.message()).c_str());
      return 1;
    }
  }
  return Run(*options, SuccessorOf(argc, argv), program);
}
