// ringfused: serves a directory (passthrough, read-write) or one revision of a repository of
// revisions (read-only, switched by `ringfuse-ctl publish`) through the ringfuse library.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "daemon/control_commands.h"
#include "daemon/control_socket.h"
#include "daemon/credentials.h"
#include "daemon/debug_tracer.h"
#include "daemon/detach.h"
#include "daemon/options.h"
#include "daemon/passthrough_fs.h"
#include "daemon/revisions.h"
#include "daemon/session_options.h"
#include "ringfuse/json_trace.h"
#include "ringfuse/log.h"
#include "ringfuse/notify.h"
#include "ringfuse/session.h"
#include "ringfuse/signals.h"
#include "transport/errno_status.h"

namespace ringfuse::daemon {
namespace {

// The daemon is told every path before it changes directory (when detaching), so it keeps them
// absolute; realpath also names a missing SOURCE or MOUNTPOINT precisely.
absl::Status MakeAbsolute(std::string& path, std::string_view what) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr)
    return internal::ErrnoStatus(errno, absl::StrFormat("%s %s", what, path));
  path = resolved;
  ::free(resolved);
  return absl::OkStatus();
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
// checks them first. Says so at start, since it changes who owns what the mount creates.
absl::Status CheckCallerIdentity(const DaemonOptions& options, std::string_view program) {
  if (CanActAsCallers()) return absl::OkStatus();
  if (options.allow_other && !options.default_permissions) {
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
  internal::UniqueFd root;
  std::optional<RevisionRepo> repo;
  std::string revision;
};

absl::StatusOr<Served> OpenServed(const DaemonOptions& options) {
  Served served;
  if (options.mode == Mode::kPassthrough) {
    served.root.reset(::open(options.source.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!served.root.valid()) return internal::ErrnoStatus(errno, options.source);
    return served;
  }
  absl::StatusOr<RevisionRepo> repo = RevisionRepo::Open(options.source);
  if (!repo.ok()) return repo.status();
  absl::StatusOr<std::string> revision =
      options.revision.empty() ? repo->Newest() : absl::StatusOr<std::string>(options.revision);
  if (!revision.ok()) return revision.status();
  absl::StatusOr<internal::UniqueFd> root = repo->OpenRevision(*revision);
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
  std::unique_ptr<PassthroughFs> fs;
  std::unique_ptr<Session> session;
  std::unique_ptr<Publisher> publisher;
  std::unique_ptr<ControlServer> control;
};

absl::Status StartControl(Running& running, Served& served, const DaemonOptions& options) {
  running.publisher = std::make_unique<Publisher>(
      std::move(*served.repo), served.revision, running.fs->inodes(), running.session->notifier());
  absl::StatusOr<dev_t> device = MountedDevice(options.mountpoint);
  if (!device.ok()) return device.status();
  Running* state = &running;
  absl::StatusOr<std::unique_ptr<ControlServer>> control =
      ControlServer::Start(*device, [state](std::string_view request) {
        return AnswerControl(request, *state->publisher, state->fs->inodes());
      });
  if (!control.ok()) return control.status();
  running.control = std::move(*control);
  return absl::OkStatus();
}

absl::Status Start(Running& running, const DaemonOptions& options, internal::UniqueFd trace_file) {
  absl::StatusOr<Served> served = OpenServed(options);
  if (!served.ok()) return served.status();
  running.fs = std::make_unique<PassthroughFs>(std::move(served->root), options);
  if (options.mode == Mode::kRevisions) running.fs->inodes().TrackEntries();
  SessionOptions session_options = MakeSessionOptions(options);
  if (options.debug) session_options.observer = &running.tracer;
  if (options.passthrough) session_options.backing_files = &running.fs->backing_files();
  if (trace_file.valid()) {
    running.trace = std::make_unique<JsonTraceWriter>(trace_file.release());
    session_options.observer = running.trace.get();
  }
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Start(session_options, *running.fs);
  if (!session.ok()) return session.status();
  running.session = std::move(*session);
  if (running.session->negotiated().kernel_minor >= NotifyMinimumMinor(wire::NotifyCode::kPrune)) {
    Notifier* notifier = &running.session->notifier();
    running.fs->SetPruner([notifier](std::span<const uint64_t> nodeids) {
      absl::StatusOr<Notification> prune = EncodeNotifyPrune(nodeids);
      if (prune.ok()) notifier->Queue(*prune);
    });
  }
  if (options.passthrough) {
    if (absl::Status works = running.fs->CheckPassthroughWorks(); !works.ok()) return works;
  }
  if (options.mode == Mode::kRevisions) return StartControl(running, *served, options);
  return absl::OkStatus();
}

int Run(const DaemonOptions& options, std::string_view program) {
  StopSignals signals;  // before any thread exists
  RaiseFdLimit();       // before the inode table sizes itself from it
  if (absl::Status identity = CheckCallerIdentity(options, program); !identity.ok()) {
    std::fprintf(stderr, "%s: %s\n", std::string(program).c_str(),
                 std::string(identity.message()).c_str());
    return 1;
  }
  SetLogLevel(options.debug ? LogLevel::kDebug : LogLevel::kWarning);
  // Opened before detaching, so that a relative FILE is where the user meant and a bad one fails
  // in the foreground; its writer thread starts after, since threads do not survive the fork.
  internal::UniqueFd trace_file;
  if (!options.trace.empty()) {
    absl::StatusOr<int> created = JsonTraceWriter::CreateFile(options.trace);
    if (!created.ok()) {
      std::fprintf(stderr, "%s: %s\n", std::string(program).c_str(),
                   std::string(created.status().message()).c_str());
      return 1;
    }
    trace_file.reset(*created);
  }
  std::optional<DetachedDaemon> detached;
  if (!options.foreground) {
    absl::StatusOr<DetachedDaemon> daemon = Detach(program);
    if (!daemon.ok()) {
      std::fprintf(stderr, "%s: %s\n", std::string(program).c_str(),
                   std::string(daemon.status().message()).c_str());
      return 1;
    }
    detached.emplace(std::move(*daemon));
  }
  Running running;
  if (absl::Status status = Start(running, options, std::move(trace_file)); !status.ok()) {
    const std::string message(status.message());
    if (detached) {
      detached->Failed(message);  // the waiting command prints it
    } else {
      std::fprintf(stderr, "%s: %s\n", std::string(program).c_str(), message.c_str());
    }
    return 1;
  }
  if (detached) {
    detached->Ready();
  } else {
    std::fprintf(stderr, "%s: %s\n", std::string(program).c_str(),
                 running.session->transport_choice().c_str());
  }
  signals.Wait(*running.session);
  if (running.session->aborted()) {
    std::fprintf(stderr,
                 "%s: the kernel aborted the connection to %s: a request went unanswered past "
                 "-o request_timeout, or someone aborted it through /sys/fs/fuse/connections; "
                 "unmounted\n",
                 std::string(program).c_str(), options.mountpoint.c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace ringfuse::daemon

int main(int argc, char** argv) {
  using namespace ringfuse::daemon;
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
  for (auto [path, what] :
       {std::pair{&options->source, "source"}, std::pair{&options->mountpoint, "mountpoint"}}) {
    if (absl::Status status = MakeAbsolute(*path, what); !status.ok()) {
      std::fprintf(stderr, "ringfused: %s\n", std::string(status.message()).c_str());
      return 1;
    }
  }
  return Run(*options, program);
}
