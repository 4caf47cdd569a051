#include "daemon/daemon.h"

#include <fcntl.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/errno_status.h"
#include "daemon/control/control_commands.h"
#include "daemon/handover/handover_state.h"
#include "daemon/handover/restart.h"
#include "daemon/session_options.h"
#include "daemon/test_hooks.h"
#include "ringfuse/log.h"
#include "ringfuse/notify.h"

namespace ringfuse::daemon {

// What the served tree starts as: SOURCE, or the chosen revision of REPO.
struct Daemon::Served {
  base::UniqueFd root;
  std::optional<RevisionRepo> repo;
  std::string revision;
};

// What the daemon it takes over from hands this one, besides the connection: its state, then
// its control socket's listener as the last fd. A daemon that mounts keeps the revision it chose
// and has no listener.
struct Daemon::Inherited {
  std::string revision;
  base::UniqueFd control_listener;
};

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(const DaemonOptions& options,
                                                      base::UniqueFd trace_file, Program successor,
                                                      std::string_view program) {
  std::unique_ptr<Daemon> daemon(new Daemon(std::move(successor), options.keeper_fd >= 0));
  if (absl::Status served = daemon->Serve(options, std::move(trace_file), program); !served.ok()) {
    return served;
  }
  return daemon;
}

Daemon::~Daemon() = default;

absl::Status Daemon::Serve(const DaemonOptions& options, base::UniqueFd trace_file,
                           std::string_view program) {
  absl::StatusOr<Served> served = OpenServed(options);
  if (!served.ok()) return served.status();
  fs_ = std::make_unique<PassthroughFs>(std::move(served->root), options);
  if (options.mode == Mode::kRevisions) fs_->inodes().TrackEntries();
  const SessionOptions session_options = SessionOptionsFor(options, std::move(trace_file));
  Inherited inherited{served->revision, {}};
  absl::StatusOr<std::unique_ptr<Session>> session =
      StartSession(session_options, options, *served, inherited);
  if (!session.ok()) return session.status();
  session_ = std::move(*session);
  ConnectFsToKernel();
  if (options.passthrough && options.takeover_fd < 0) {
    if (absl::Status works = fs_->CheckPassthroughWorks(); !works.ok()) return works;
  }
  return StartControl(*served, inherited, options, program);
}

absl::StatusOr<Daemon::Served> Daemon::OpenServed(const DaemonOptions& options) {
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

// The --trace writer, when there is one, is the observer: it replaces -d's tracer.
SessionOptions Daemon::SessionOptionsFor(const DaemonOptions& options, base::UniqueFd trace_file) {
  SessionOptions session_options = MakeSessionOptions(options);
  if (options.debug) session_options.observer = &tracer_;
  if (RequestObserver* hang = LookupHangIfTestAsks()) session_options.observer = hang;
  if (options.passthrough) session_options.backing_files = &fs_->backing_files();
  if (trace_file.valid()) {
    trace_ = std::make_unique<JsonTraceWriter>(trace_file.release());
    session_options.observer = trace_.get();
  }
  return session_options;
}

// Mounts, or takes the mount over from the daemon at the other end of --takeover-fd, or (kept by
// the keeper at the other end of --keeper-fd) mounts or recovers it.
absl::StatusOr<std::unique_ptr<Session>> Daemon::StartSession(const SessionOptions& session_options,
                                                              const DaemonOptions& options,
                                                              Served& served,
                                                              Inherited& inherited) {
  PassthroughFs& fs = *fs_;
  if (options.keeper_fd >= 0) {
    std::vector<int> kept_fds;  // journals in passthrough mode only (kept_state.h)
    if (options.mode == Mode::kPassthrough) {
      absl::StatusOr<std::vector<int>> journals = kept_state_.Journal(fs);
      if (!journals.ok()) return journals.status();
      kept_fds = std::move(*journals);
    }
    return Session::StartKept(
        options.keeper_fd, session_options, fs,
        [&](const CrashRecovery& crash) { return Recover(crash, served, inherited); }, kept_fds);
  }
  if (options.takeover_fd < 0) return Session::Start(session_options, fs);
  const base::UniqueFd socket(options.takeover_fd);
  StopHereIfTestAsks("starting");
  // Every check comes before the successor tells its predecessor it serves: after that, a
  // failure here would end the mount with nobody left to serve it.
  return Session::TakeOver(socket.get(), session_options, fs, [&](HandoverPayload payload) {
    StopHereIfTestAsks("received");
    if (absl::Status restored = RestoreInherited(std::move(payload), inherited); !restored.ok()) {
      return restored;
    }
    if (options.passthrough) {
      if (absl::Status works = fs.CheckPassthroughWorks(); !works.ok()) return works;
    }
    StopHereIfTestAsks("restored");
    return absl::OkStatus();
  });
}

absl::Status Daemon::RestoreInherited(HandoverPayload payload, Inherited& inherited) {
  if (payload.fds.empty()) {
    return absl::DataLossError("the handover carried no control socket");
  }
  inherited.control_listener.reset(payload.fds.back());
  payload.fds.pop_back();
  absl::StatusOr<std::string> revision = RestoreHandoverState(std::move(payload), *fs_);
  if (!revision.ok()) return revision.status();
  inherited.revision = std::move(*revision);
  return absl::OkStatus();
}

// A kept daemon started again after a crash: node ids, fh values and, journaled, the dead
// daemon's nodes and open files (KeptState), and the revision last published (the keeper's
// note).
absl::StatusOr<Recovered> Daemon::Recover(const CrashRecovery& crash, Served& served,
                                          Inherited& inherited) {
  StopTestHangs();
  absl::StatusOr<Recovered> recovered = kept_state_.Recover(crash, *fs_);
  if (!recovered.ok()) return recovered.status();
  if (served.repo && !crash.note.empty() && crash.note != inherited.revision) {
    absl::StatusOr<base::UniqueFd> root = served.repo->OpenRevision(crash.note);
    if (!root.ok()) return root.status();
    fs_->inodes().ReplaceRoot(std::move(*root));
    inherited.revision = crash.note;
  }
  return recovered;
}

void Daemon::ConnectFsToKernel() {
  Notifier* notifier = &session_->notifier();
  fs_->SetNotifier(notifier);
  if (session_->negotiated().kernel_minor >= NotifyMinimumMinor(wire::NotifyCode::kPrune)) {
    fs_->SetPruner([notifier](std::span<const uint64_t> nodeids) {
      absl::StatusOr<Notification> prune = Notification::Prune(nodeids);
      if (prune.ok()) notifier->Queue(*prune);
    });
  }
}

// Revisions mode needs the socket for publish; without it, passthrough mode only loses
// ringfuse-ctl (a user's daemon may have no runtime directory to put it in), and says so.
absl::Status Daemon::StartControl(Served& served, Inherited& inherited,
                                  const DaemonOptions& options, std::string_view program) {
  if (options.mode == Mode::kRevisions) {
    publisher_ = std::make_unique<Publisher>(std::move(*served.repo), inherited.revision,
                                             fs_->inodes(), session_->notifier());
    if (options.keeper_fd >= 0) {
      Session* session = session_.get();
      publisher_->NoteEachSwitch([session](const std::string& current) {
        if (absl::Status noted = session->UpdateKeptNote(current); !noted.ok()) {
          LogLine(LogLevel::kWarning,
                  absl::StrCat("a crash would bring back an older revision: ", noted.message()));
        }
      });
    }
  }
  absl::StatusOr<std::unique_ptr<ControlServer>> control =
      OpenControl(std::move(inherited.control_listener));
  if (control.ok()) {
    control_ = std::move(*control);
    return absl::OkStatus();
  }
  if (options.mode == Mode::kRevisions) return control.status();
  std::fprintf(stderr, "%s: no control socket, so ringfuse-ctl cannot reach this daemon: %s\n",
               std::string(program).c_str(), std::string(control.status().message()).c_str());
  return absl::OkStatus();
}

// The control socket: a new one, or the one a restarted daemon handed over with the mount.
absl::StatusOr<std::unique_ptr<ControlServer>> Daemon::OpenControl(base::UniqueFd inherited) {
  ControlServer::Answer answer = [this](std::string_view request, ControlServer& server) {
    return Answer(request, server);
  };
  if (inherited.valid()) return ControlServer::Adopt(std::move(inherited), std::move(answer));
  // The mount's device is the connection's id (its name under /sys/fs/fuse/connections), an
  // anonymous device of major 0. Not a stat of the mountpoint: that is a request to this very
  // daemon, and one killed while its worker held it would wait for the answer uninterruptibly,
  // never exiting, so never closing /dev/fuse.
  return ControlServer::Start(::makedev(0, session_->connection_id()), std::move(answer));
}

std::string Daemon::Answer(std::string_view request, ControlServer& server) {
  const auto restart = [&](const std::string& binary) -> absl::StatusOr<RestartReport> {
    if (kept_) {
      return absl::FailedPreconditionError(
          "this ringfused is kept by ringfuse-ctl supervise, which holds its connection: end it "
          "(kill it), and the keeper starts the program again on the same mount");
    }
    Program successor = successor_;
    if (!binary.empty()) successor.binary = binary;
    const std::string revision = publisher_ ? publisher_->current() : "";
    absl::StatusOr<RestartReport> report =
        RestartDaemon(successor, *session_, *fs_, revision, server);
    if (report.ok()) successor_pid_ = report->pid;
    return report;
  };
  return AnswerControl(request, publisher_.get(), fs_->inodes(), restart);
}

}  // namespace ringfuse::daemon
