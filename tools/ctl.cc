// ringfuse-ctl: controls a running ringfused through its control socket.
//
//   ringfuse-ctl publish MOUNTPOINT REV [--invalidate=epoch|entries|entries-batched|none]
//   ringfuse-ctl status MOUNTPOINT
//   ringfuse-ctl restart MOUNTPOINT [--binary=PATH]
//   ringfuse-ctl supervise [--restarts=N] -- PROGRAM [ARGS...]
//
// publish returns once the daemon serves REV and the kernel has taken the invalidation, and
// prints how long that took and how much of the kernel's cache it concerned. restart returns once
// a new ringfused serves the mount in place of the old one, which exits
// (daemon/handover/restart.h). supervise runs PROGRAM (ringfused) kept, and starts it again after a
// crash (tools/supervise.h).
#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "daemon/control/control_commands.h"
#include "daemon/control/control_socket.h"
#include "tools/supervise.h"

namespace {

using ringfuse::daemon::ControlFields;

constexpr absl::Duration kTimeout = absl::Seconds(60);
// Beyond the daemon's wait for its successor to serve (HandoverOptions::takeover_timeout).
constexpr absl::Duration kRestartTimeout = absl::Seconds(90);

}  // namespace

ABSL_FLAG(std::string, invalidate, "epoch",
          "publish: how to invalidate what the kernel cached: epoch, entries, entries-batched or "
          "none");
ABSL_FLAG(std::string, binary, "",
          "restart: the program to start in the daemon's place (default: the daemon's own)");
ABSL_FLAG(int, restarts, 10,
          "supervise: restarts within a minute before the keeper gives up and the mount ends");

namespace {

constexpr const char* kUsage =
    "usage: ringfuse-ctl publish MOUNTPOINT REV "
    "[--invalidate=epoch|entries|entries-batched|none]\n"
    "       ringfuse-ctl status MOUNTPOINT\n"
    "       ringfuse-ctl restart MOUNTPOINT [--binary=PATH]\n"
    "       ringfuse-ctl supervise [--restarts=N] -- PROGRAM [ARGS...]\n"
    "\n"
    "publish: serve revision REV of the repository mounted at MOUNTPOINT, then invalidate\n"
    "what the kernel cached: epoch (default; one INC_EPOCH message), entries (one\n"
    "INVAL_ENTRY per name and one INVAL_INODE per node), entries-batched (the same in one\n"
    "io_uring submission) or none (cached names stay until their timeouts).\n"
    "restart: start a new ringfused (the program the daemon was started from, or PATH) with\n"
    "the same command line and hand it the live mount; the old daemon exits, nothing is\n"
    "unmounted, and clients only wait for the handover. If the new one fails to take over, the\n"
    "old one serves on.\n"
    "supervise: run PROGRAM (ringfused and its arguments, which get --keeper-fd=N) and keep\n"
    "its mount across a crash: when it dies (kill -9, a crash), start it again on the same\n"
    "connection; clients only wait, and open files are reopened. Open directories and locks\n"
    "are lost (docs/crash-recovery.md). Ends when PROGRAM exits 0, or when it dies again after N\n"
    "restarts within a minute (default 10).\n";

int Usage() {
  std::fputs(kUsage, stderr);
  return 2;
}

// Abseil ends the program with status 1 at an unknown flag; a command-line error here is 2, with
// the usage.
bool OnlyKnownFlags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") return true;
    if (arg.size() < 2 || arg[0] != '-') continue;
    std::string_view name = arg.substr(arg[1] == '-' ? 2 : 1);
    name = name.substr(0, name.find('='));
    if (absl::FindCommandLineFlag(std::string(name)) == nullptr) return false;
  }
  return true;
}

absl::StatusOr<ControlFields> Ask(const std::string& mountpoint, const std::string& request,
                                  absl::Duration timeout = kTimeout) {
  absl::StatusOr<std::string> reply =
      ringfuse::daemon::SendControlRequest(mountpoint, request, timeout);
  if (!reply.ok()) return reply.status();
  return ringfuse::daemon::ParseControlReply(*reply);
}

std::string Field(const ControlFields& fields, const std::string& name) {
  auto found = fields.find(name);
  return found == fields.end() ? "?" : found->second;
}

void PrintPublished(const ControlFields& f) {
  std::printf(
      "published %s: invalidation by %s took %s us in %s message(s); the switch took %s "
      "us; the kernel could hold %s names and %s nodes",
      Field(f, "revision").c_str(), Field(f, "method").c_str(), Field(f, "invalidate_us").c_str(),
      Field(f, "messages").c_str(), Field(f, "switch_us").c_str(), Field(f, "entries").c_str(),
      Field(f, "inodes").c_str());
  const std::string not_cached = Field(f, "not_cached");
  if (not_cached != "0") std::printf(" (%s were gone already)", not_cached.c_str());
  if (Field(f, "epoch_fallback") == "1") {
    std::printf("; more names were looked up than the daemon tracks, so an INC_EPOCH went too");
  }
  std::printf("\n");
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "ringfuse-ctl: %s\n", std::string(status.message()).c_str());
  return 1;
}

void PrintStatus(const ControlFields& f) {
  const std::string served =
      f.contains("revision") ? "revision " + Field(f, "revision") : std::string("passthrough");
  std::printf("ringfused (pid %s) serves %s: %s nodes known to the kernel, %s lookups so far\n",
              Field(f, "pid").c_str(), served.c_str(), Field(f, "nodes").c_str(),
              Field(f, "lookups").c_str());
}

// Microseconds as the daemon reports them, in milliseconds.
std::string Milliseconds(const ControlFields& f, const std::string& name) {
  const std::string us = Field(f, name);
  char* end = nullptr;
  const double value = std::strtod(us.c_str(), &end);
  if (us.empty() || *end != '\0') return us;
  return absl::StrFormat("%.2f", value / 1000);
}

int Restart(const std::string& mountpoint) {
  std::string request = "restart";
  if (const std::string binary = absl::GetFlag(FLAGS_binary); !binary.empty()) {
    // The daemon runs elsewhere (its working directory is /): it is told an absolute path.
    char* resolved = ::realpath(binary.c_str(), nullptr);
    if (resolved == nullptr) {
      return Fail(absl::InvalidArgumentError(
          absl::StrFormat("--binary %s: %s", binary, std::strerror(errno))));
    }
    absl::StrAppend(&request, " ", resolved);
    ::free(resolved);
  }
  absl::StatusOr<ControlFields> fields = Ask(mountpoint, request, kRestartTimeout);
  if (absl::IsFailedPrecondition(fields.status())) {
    return Fail(absl::FailedPreconditionError(
        absl::StrFormat("restart of %s failed, the running ringfused serves on: %s", mountpoint,
                        fields.status().message())));
  }
  if (!fields.ok()) return Fail(fields.status());
  std::printf(
      "restarted %s: new ringfused pid %s, clients paused %s ms (state: %s bytes, %s fds, saved "
      "in %s ms)\n",
      mountpoint.c_str(), Field(*fields, "pid").c_str(), Milliseconds(*fields, "pause_us").c_str(),
      Field(*fields, "state_bytes").c_str(), Field(*fields, "state_fds").c_str(),
      Milliseconds(*fields, "save_us").c_str());
  return 0;
}

int Supervise(std::span<const std::string_view> command) {
  const int max_restarts = absl::GetFlag(FLAGS_restarts);
  if (max_restarts < 0) {
    std::fprintf(stderr, "ringfuse-ctl: --restarts must be 0 or more, not %d\n", max_restarts);
    return 2;
  }
  ringfuse::tools::SuperviseOptions options;
  options.max_restarts = max_restarts;
  options.daemon.binary = std::string(command[0]);
  for (std::string_view arg : command) options.daemon.argv.emplace_back(arg);
  return ringfuse::tools::Supervise(options);
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  if (!OnlyKnownFlags(argc, argv)) return Usage();
  const std::vector<char*> parsed = absl::ParseCommandLine(argc, argv);
  const std::vector<std::string_view> arg_list(parsed.begin() + 1, parsed.end());
  const std::span<const std::string_view> args(arg_list);
  if (args.size() == 2 && args[0] == "status") {
    absl::StatusOr<ControlFields> fields = Ask(std::string(args[1]), "status");
    if (!fields.ok()) return Fail(fields.status());
    PrintStatus(*fields);
    return 0;
  }
  if (args.size() == 2 && args[0] == "restart") return Restart(std::string(args[1]));
  if (args.size() >= 2 && args[0] == "supervise") return Supervise(args.subspan(1));
  if (args.size() == 3 && args[0] == "publish") {
    absl::StatusOr<ControlFields> fields =
        Ask(std::string(args[1]),
            absl::StrFormat("publish %s %s", args[2], absl::GetFlag(FLAGS_invalidate)));
    if (!fields.ok()) return Fail(fields.status());
    PrintPublished(*fields);
    return 0;
  }
  return Usage();
}
