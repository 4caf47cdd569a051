// ringfuse-bench: benchmarks that run the real ringfused on real FUSE mounts.
//
//   ringfuse-bench invalidate [--inodes=20,8000] [--runs=100]
//                  [--methods=entries,entries-batched,epoch,none]
//                  [--transport=auto|threads|uring|uring-cmd] [--ringfused=PATH]
//   ringfuse-bench notify-floor [--count=8000] [--runs=100]
//   [--transport=auto|threads|uring|uring-cmd]
//
// notify-floor: the cost of a notification that finds nothing cached (bench_notify_floor.h),
// the floor under any per-entry invalidation.
//
// invalidate: for each tree size, builds a repository of two revisions r1 and r2 of that many
// inodes (directories of about 100 files and symlinks; r2 hard-links r1's files), serves it with
// `ringfused --revisions REPO MNT -f --transport=...` as a child, and then, for every run and
// every method in turn: walks the whole tree (lstat of every entry loads the kernel's dentry
// and inode caches), publishes the other revision with the method through the control socket,
// and records ringfused's invalidate_us and the request's round trip. The walk after each
// publish checks that the invalidation happened: the daemon's lookup count must grow by the
// number of entries walked (and must not, after `none`, the negative control).
//
// What the kernel does: an INVAL_ENTRY of a name may evict the name's inode, so ringfused sends
// every INVAL_INODE first, then the names deepest first. INC_EPOCH (protocol 7.44, Linux 6.16)
// marks every dentry of the connection stale at once, and a dentry is looked up again when
// next used; on an older kernel the epoch publish fails, and so does the benchmark.
//
// Exit status: 0; 1 when a publish failed, the daemon did not end cleanly, or a check failed;
// 2 for a bad command line; 77 (ctest's SKIP_RETURN_CODE) when this process cannot mount FUSE
// (not root, no /dev/fuse), after saying why; 130 after SIGINT, SIGTERM or SIGHUP, which stop it
// between two steps and still unmount, remove the temporary trees and restore the io_uring
// switch. --transport=uring-cmd turns FUSE-over-io_uring on for the run (and restores the old
// setting); auto leaves it as the machine has it, and the tables say what the daemon chose.
#include <cstdio>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "daemon/invalidation.h"
#include "tools/bench_daemon.h"
#include "tools/bench_invalidate.h"
#include "tools/bench_notify_floor.h"
#include "tools/bench_system.h"
#include "transport/transport.h"
#include "transport/uring_switch.h"

ABSL_FLAG(std::string, inodes, "20,8000", "tree sizes in inodes below the root, comma-separated");
ABSL_FLAG(int, runs, 100, "invalidate: publishes per method and tree size; notify-floor: runs");
ABSL_FLAG(std::string, methods, "entries,entries-batched,epoch,none",
          "invalidation methods to interleave (none: the negative control)");
ABSL_FLAG(std::string, transport, "auto", "ringfused's transport: auto, threads, uring, uring-cmd");
ABSL_FLAG(int, count, 8000, "notify-floor: messages of each kind per run");
ABSL_FLAG(std::string, ringfused, "",
          "the daemon binary (default: ../daemon/ringfused next to this program)");

namespace ringfuse::tools {
namespace {

constexpr int kSkipped = 77;
constexpr int kMaxInodes = 1'000'000;

int BadUsage(const std::string& what) {
  std::fprintf(stderr, "ringfuse-bench: %s (see --help)\n", what.c_str());
  return 2;
}

std::optional<std::vector<int>> ParseInodeCounts(const std::string& text) {
  std::vector<int> counts;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int count = 0;
    if (!absl::SimpleAtoi(item, &count) || count < 1 || count > kMaxInodes) return std::nullopt;
    counts.push_back(count);
  }
  if (counts.empty()) return std::nullopt;
  return counts;
}

// The flags as a configuration, or the exit status of a usage error.
std::variant<InvalidateConfig, int> ReadConfig() {
  InvalidateConfig config;
  std::optional<std::vector<int>> counts = ParseInodeCounts(absl::GetFlag(FLAGS_inodes));
  if (!counts) return BadUsage("--inodes takes sizes from 1 to 1000000, comma-separated");
  config.inode_counts = std::move(*counts);
  config.runs = absl::GetFlag(FLAGS_runs);
  if (config.runs < 1) return BadUsage("--runs must be at least 1");
  config.methods = absl::StrSplit(absl::GetFlag(FLAGS_methods), ',', absl::SkipEmpty());
  if (config.methods.empty()) return BadUsage("--methods names no method");
  for (const std::string& method : config.methods) {
    if (!daemon::ParseInvalidationMethod(method)) {
      return BadUsage("unknown method " + method + ": entries, entries-batched, epoch or none");
    }
  }
  config.transport = absl::GetFlag(FLAGS_transport);
  if (!ParseTransportKind(config.transport).ok()) {
    return BadUsage("--transport is auto, threads, uring or uring-cmd");
  }
  config.ringfused = absl::GetFlag(FLAGS_ringfused);
  if (config.ringfused.empty()) config.ringfused = RingfusedNextToThisProgram();
  return config;
}

int NotifyFloor() {
  NotifyFloorConfig config;
  config.count = absl::GetFlag(FLAGS_count);
  config.runs = absl::GetFlag(FLAGS_runs);
  config.transport = absl::GetFlag(FLAGS_transport);
  if (config.count < 1 || config.runs < 1) return BadUsage("--count and --runs must be positive");
  if (!ParseTransportKind(config.transport).ok()) {
    return BadUsage("--transport is auto, threads, uring or uring-cmd");
  }
  if (std::optional<std::string> why = WhyFuseMountsCannotRun()) {
    std::printf("ringfuse-bench: skipped: %s\n", why->c_str());
    return kSkipped;
  }
  UringSwitch uring;
  if (config.transport == "uring-cmd") {
    if (absl::Status on = uring.TurnOn(); !on.ok()) {
      std::fprintf(stderr, "ringfuse-bench: %s\n", std::string(on.message()).c_str());
      return 1;
    }
  }
  return RunNotifyFloor(config);
}

int Invalidate() {
  std::variant<InvalidateConfig, int> config = ReadConfig();
  if (const int* status = std::get_if<int>(&config)) return *status;
  if (std::optional<std::string> why = WhyFuseMountsCannotRun()) {
    std::printf("ringfuse-bench: skipped: %s\n", why->c_str());
    return kSkipped;
  }
  CatchStopSignals();
  return RunInvalidate(std::get<InvalidateConfig>(config));
}

}  // namespace
}  // namespace ringfuse::tools

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "benchmarks through the real ringfused on real FUSE mounts (root).\n"
      "  ringfuse-bench invalidate [--inodes=20,8000] [--runs=100]\n"
      "                 [--methods=entries,entries-batched,epoch,none]\n"
      "                 [--transport=auto|threads|uring|uring-cmd] [--ringfused=PATH]\n"
      "  ringfuse-bench notify-floor [--count=8000] [--runs=100]\n"
      "                 [--transport=auto|threads|uring|uring-cmd]");
  const std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() == 2 && std::string(args[1]) == "invalidate") {
    return ringfuse::tools::Invalidate();
  }
  if (args.size() == 2 && std::string(args[1]) == "notify-floor") {
    return ringfuse::tools::NotifyFloor();
  }
  std::fprintf(stderr, "%s\n", std::string(absl::ProgramUsageMessage()).c_str());
  return 2;
}
