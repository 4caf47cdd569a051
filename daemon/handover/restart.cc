#include "daemon/handover/restart.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/errno_status.h"
#include "base/fd.h"
#include "base/wait_status.h"
#include "daemon/handover/handover_state.h"
#include "daemon/handover/spawn.h"
#include "daemon/handover/trusted_program.h"
#include "daemon/options.h"

namespace ringfuse::daemon {
namespace {

// Kills a successor that did not take over and says how it ended, for the error.
std::string Reap(pid_t pid, const std::string& binary) {
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string who = absl::StrFormat("the new process (%s, pid %d)", binary, pid);
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) return absl::StrCat(who, " was killed");
  return absl::StrCat(who, " ", base::DescribeExit(status));
}

}  // namespace

absl::StatusOr<RestartReport> RestartDaemon(const Program& successor, Session& session,
                                            PassthroughFs& fs, const std::string& revision,
                                            ControlServer& control) {
  // Checked and opened now, and started from this open file: no later rename changes what runs.
  const absl::StatusOr<base::UniqueFd> program = OpenTrustedProgram(successor.binary);
  if (!program.ok()) return program.status();
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) {
    return base::ErrnoStatus(errno, "socketpair for the handover");
  }
  const base::UniqueFd ours(ends[0]);
  base::UniqueFd theirs(ends[1]);
  // In a session of its own, so that it outlives the terminal or service that started this one.
  absl::StatusOr<pid_t> pid = SpawnOpenedWithSocket(program->get(), successor, kTakeoverFdOption,
                                                    theirs.get(), /*new_session=*/true);
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
