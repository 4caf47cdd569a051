// ringfused: serves a directory (passthrough, read-write) or one revision of a repository of
// revisions (read-only, switched by `ringfuse-ctl publish`) through the ringfuse library.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>
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
#include "daemon/control/control_commands.h"
#include "daemon/control/control_socket.h"
#include "daemon/crash/kept_state.h"
#include "daemon/debug_tracer.h"
#include "daemon/detach.h"
#include "daemon/fs/passthrough_fs.h"
#include "daemon/handover/handover_state.h"
#include "daemon/handover/restart.h"
#include "daemon/inodes/mutex_mode.h"
#include "daemon/options.h"
#include "daemon/revisions/revisions.h"
#include "daemon/session_options.h"
#include "daemon/test_hooks.h"
#include "ringfuse/json_trace.h"
#include "ringfuse/log.h"
#include "ringfuse/notify.h"
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

// What the served tree starts as: SOURCE, or the chosen revision of REPO.
struct Served {
  base::UniqueFd root;
  std::optional<RevisionRepo> repo;
  std::string revision;
};

absl::StatusOr<Served> OpenServed(const DaemonOptions& options) {
  Served served;
  if (options.mode == Mode::kPassthrough) {
    served.root.reset(::open(options.source.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!served.root.valid()) return base::ErrnoStatus(errno, options.source);
    return served;
  }
  absl::StatusOr<RevisionRepo> repo = RevisionRepo::Open(options.source);
  if (!repo.ok()) return repo.status();
  absl::StatusOr<std::string> revision =
      options.revision.empty() ? repo->Newest() : absl::StatusOr<std::string>(options.revision);
  if (!revision.ok()) return revision.status();
  absl::StatusOr<base::UniqueFd> root = repo->OpenRevision(*revision);
  if (!root.ok()) return root.status();
  served.root = std::move(*root);
  served.repo.emplace(std::move(*repo));
  served.revision = std::move(*revision);
  return served;
}

// Everything that lives while the mount is served, torn down in reverse order.
struct Running {
  DebugTracer tracer;
  std::unique_ptr<JsonTraceWriter> trace;
  KeptState kept_state;  // a kept daemon's journals, in passthrough mode
  std::unique_ptr<PassthroughFs> fs;
  std::unique_ptr<Session> session;
  std::unique_ptr<Publisher> publisher;
  std::unique_ptr<ControlServer> control;
  Program successor;        // what ringfuse-ctl restart starts
  bool kept = false;        // under ringfuse-ctl supervise, which restarts it instead
  pid_t successor_pid = 0;  // once handed over; written by the control thread
};

std::string AnswerFor(Running& running, std::string_view request, ControlServer& server) {
  const auto restart = [&](const std::string& binary) -> absl::StatusOr<RestartReport> {
    if (running.kept) {
      return absl::FailedPreconditionError(
          "this ringfused is kept by ringfuse-ctl supervise, which holds its connection: end it "
          "(kill it), and the keeper starts the program again on the same mount");
    }
    Program successor = running.successor;
    if (!binary.empty()) successor.binary = binary;
    const std::string revision = running.publisher ? running.publisher->current() : "";
    absl::StatusOr<RestartReport> report =
        RestartDaemon(successor, *running.session, *running.fs, revision, server);
    if (report.ok()) running.successor_pid = report->pid;
    return report;
  };
  return AnswerControl(request, running.publisher.get(), running.fs->inodes(), restart);
}

// The control socket: a new one, or the one a restarted daemon handed over with the mount.
absl::StatusOr<std::unique_ptr<ControlServer>> OpenControl(Running& running,
                                                           base::UniqueFd inherited) {
  Running* state = &running;
  ControlServer::Answer answer = [state](std::string_view request, ControlServer& server) {
    return AnswerFor(*state, request, server);
  };
  if (inherited.valid()) return ControlServer::Adopt(std::move(inherited), std::move(answer));
  // The mount's device is the connection's id (its name under /sys/fs/fuse/connections), an
  // anonymous device of major 0. Not a stat of the mountpoint: that is a request to this very
  // daemon, and one killed while its worker held it would wait for the answer uninterruptibly,
  // never exiting, so never closing /dev/fuse.
  return ControlServer::Start(::makedev(0, running.session->connection_id()), std::move(answer));
}

// Revisions mode needs the socket for publish; without it, passthrough mode only loses
// ringfuse-ctl (a user's daemon may have no runtime directory to put it in), and says so.
absl::Status StartControl(Running& running, Served& served, const std::string& revision,
                          base::UniqueFd inherited, const DaemonOptions& options,
                          std::string_view program) {
  if (options.mode == Mode::kRevisions) {
    running.publisher = std::make_unique<Publisher>(
        std::move(*served.repo), revision, running.fs->inodes(), running.session->notifier());
    if (options.keeper_fd >= 0) {
      Session* session = running.session.get();
      running.publisher->NoteEachSwitch([session](const std::string& current) {
        if (absl::Status noted = session->UpdateKeptNote(current); !noted.ok()) {
          LogLine(LogLevel::kWarning,
                  absl::StrCat("a crash would bring back an older revision: ", noted.message()));
        }
      });
    }
  }
  absl::StatusOr<std::unique_ptr<ControlServer>> control =
      OpenControl(running, std::move(inherited));
  if (control.ok()) {
    running.control = std::move(*control);
    return absl::OkStatus();
  }
  if (options.mode == Mode::kRevisions) return control.status();
  std::fprintf(stderr, "%s: no control socket, so ringfuse-ctl cannot reach this daemon: %s\n",
               std::string(program).c_str(), std::string(control.status().message()).c_str());
  return absl::OkStatus();
}

// What the daemon it takes over from hands this one, besides the connection: its state, then
// its control socket's listener as the last fd. A daemon that mounts keeps the revision it chose
// and has no listener.
struct Inherited {
  std::string revision;
  base::UniqueFd control_listener;
};

absl::Status RestoreInherited(HandoverPayload payload, PassthroughFs& fs, Inherited& inherited) {
  if (payload.fds.empty()) {
    return absl::DataLossError("the handover carried no control socket");
  }
  inherited.control_listener.reset(payload.fds.back());
  payload.fds.pop_back();
  absl::StatusOr<std::string> revision = RestoreHandoverState(std::move(payload), fs);
  if (!revision.ok()) return revision.status();
  inherited.revision = std::move(*revision);
  return absl::OkStatus();
}

// A kept daemon started again after a crash: node ids, fh values and, journaled, the dead
// daemon's nodes and open files (KeptState), and the revision last published (the keeper's
// note).
absl::StatusOr<Recovered> RecoverAfterCrash(const CrashRecovery& crash, PassthroughFs& fs,
                                            Served& served, Inherited& inherited,
                                            KeptState& kept_state) {
  StopTestHangs();
  absl::StatusOr<Recovered> recovered = kept_state.Recover(crash, fs);
  if (!recovered.ok()) return recovered.status();
  if (served.repo && !crash.note.empty() && crash.note != inherited.revision) {
    absl::StatusOr<base::UniqueFd> root = served.repo->OpenRevision(crash.note);
    if (!root.ok()) return root.status();
    fs.inodes().ReplaceRoot(std::move(*root));
    inherited.revision = crash.note;
  }
  return recovered;
}

// Mounts, or takes the mount over from the daemon at the other end of --takeover-fd, or (kept by
// the keeper at the other end of --keeper-fd) mounts or recovers it.
absl::StatusOr<std::unique_ptr<Session>> StartSession(const SessionOptions& session_options,
                                                      const DaemonOptions& options,
                                                      PassthroughFs& fs, Served& served,
                                                      Inherited& inherited, KeptState& kept_state) {
  if (options.keeper_fd >= 0) {
    std::vector<int> kept_fds;  // journals in passthrough mode only (kept_state.h)
    if (options.mode == Mode::kPassthrough) {
      absl::StatusOr<std::vector<int>> journals = kept_state.Journal(fs);
      if (!journals.ok()) return journals.status();
      kept_fds = std::move(*journals);
    }
    return Session::StartKept(
        options.keeper_fd, session_options, fs,
        [&](const CrashRecovery& crash) {
          return RecoverAfterCrash(crash, fs, served, inherited, kept_state);
        },
        kept_fds);
  }
  if (options.takeover_fd < 0) return Session::Start(session_options, fs);
  const base::UniqueFd socket(options.takeover_fd);
  StopHereIfTestAsks("starting");
  // Every check comes before the successor tells its predecessor it serves: after that, a
  // failure here would end the mount with nobody left to serve it.
  return Session::TakeOver(socket.get(), session_options, fs, [&](HandoverPayload payload) {
    StopHereIfTestAsks("received");
    if (absl::Status restored = RestoreInherited(std::move(payload), fs, inherited);
        !restored.ok()) {
      return restored;
    }
    if (options.passthrough) {
      if (absl::Status works = fs.CheckPassthroughWorks(); !works.ok()) return works;
    }
    StopHereIfTestAsks("restored");
    return absl::OkStatus();
  });
}

absl::Status Start(Running& running, const DaemonOptions& options, base::UniqueFd trace_file,
                   std::string_view program) {
  absl::StatusOr<Served> served = OpenServed(options);
  if (!served.ok()) return served.status();
  running.fs = std::make_unique<PassthroughFs>(std::move(served->root), options);
  if (options.mode == Mode::kRevisions) running.fs->inodes().TrackEntries();
  SessionOptions session_options = MakeSessionOptions(options);
  if (options.debug) session_options.observer = &running.tracer;
  if (RequestObserver* hang = LookupHangIfTestAsks()) session_options.observer = hang;
  if (options.passthrough) session_options.backing_files = &running.fs->backing_files();
  if (trace_file.valid()) {
    running.trace = std::make_unique<JsonTraceWriter>(trace_file.release());
    session_options.observer = running.trace.get();
  }
  Inherited inherited{served->revision, {}};
  absl::StatusOr<std::unique_ptr<Session>> session =
      StartSession(session_options, options, *running.fs, *served, inherited, running.kept_state);
  if (!session.ok()) return session.status();
  running.session = std::move(*session);
  running.fs->SetNotifier(&running.session->notifier());
  if (running.session->negotiated().kernel_minor >= NotifyMinimumMinor(wire::NotifyCode::kPrune)) {
    Notifier* notifier = &running.session->notifier();
    running.fs->SetPruner([notifier](std::span<const uint64_t> nodeids) {
      absl::StatusOr<Notification> prune = Notification::Prune(nodeids);
      if (prune.ok()) notifier->Queue(*prune);
    });
  }
  if (options.passthrough && options.takeover_fd < 0) {
    if (absl::Status works = running.fs->CheckPassthroughWorks(); !works.ok()) return works;
  }
  return StartControl(running, *served, inherited.revision, std::move(inherited.control_listener),
                      options, program);
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
int Ended(const Running& running, std::string_view program) {
  if (running.successor_pid != 0) {
    Say(program,
        absl::StrFormat("%s is served by pid %d now (ringfuse-ctl restart); exiting",
                        running.session->mountpoint(), static_cast<int>(running.successor_pid)));
    return 0;
  }
  if (running.session->aborted()) {
    Say(program, absl::StrFormat(
                     "the kernel aborted the connection to %s: a request went unanswered past "
                     "-o request_timeout, or someone aborted it through /sys/fs/fuse/connections; "
                     "unmounted",
                     running.session->mountpoint()));
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
  Running running;
  running.successor = std::move(successor);
  running.kept = options.keeper_fd >= 0;
  if (absl::Status status = Start(running, options, *std::move(trace_file), program);
      !status.ok()) {
    if (detached) {
      detached->Failed(std::string(status.message()));  // the waiting command prints it
    } else {
      Say(program, status.message());
    }
    return 1;
  }
  if (detached) {
    detached->Ready();
  } else {
    SayServing(options, *running.session, program);
  }
  signals.Wait(*running.session);
  // Joined first, so that a restart's answer is complete: it tells whether the mount was
  // handed over (the session then ended without unmounting).
  running.control.reset();
  return Ended(running, program);
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
