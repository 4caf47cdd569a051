// ringfuse-bench: benchmarks that run the real ringfused on real FUSE mounts.
//
//   ringfuse-bench invalidate [--inodes=20,8000] [--runs=100]
//                  [--methods=entries,entries-batched,epoch,none]
//                  [--transport=auto|threads|uring|uring-cmd] [--ringfused=PATH]
//   ringfuse-bench notify-floor [--count=8000] [--runs=100]
//   [--transport=auto|threads|uring|uring-cmd]
//   ringfuse-bench handover [--inodes=0,10000,100000] [--runs=10] [--transport=threads]
//                  [--ringfused=PATH]
//   ringfuse-bench crash [--inodes=0,10000] [--runs=10] [--transport=threads] [--ringfused=PATH]
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
// handover: the client-visible pause of one restart without unmounting (ringfuse-ctl restart)
// and the time to hand the inode table over, by the number of inodes cached (issue 11). For each
// tree size: a passthrough tree of that many inodes (directories of about 100 files and symlinks;
// 0: the root alone) served by `ringfused SOURCE MNT -f --transport=... -o entry_timeout=3600,
// attr_timeout=3600,negative_timeout=0` as a child, walked once (lstat of every entry) so that
// the kernel caches, and ringfused's table holds, a node per inode (status nodes= checks it).
// Then per run: a stat loop on one thread from 20 ms before the `restart` request until 100 ms
// after its reply, and afterwards a check that the new daemon (the pid of the reply) answers,
// kept every node and serves a cached entry. The loop stats cached entries (the kernel answers
// those alone), refetches a cached node's attributes (statx AT_STATX_FORCE_SYNC: a GETATTR the
// daemon answers) and stats a missing name (a LOOKUP each time, ENOENT). The table gives, as
// median / max over the runs:
// - client pause: the longest call of the loop; the calls the daemon answers wait for the pause.
// - pause_us (ringfused's): from the old daemon stopping its reads to the new one serving: the
//   save, the transfer over the socket, the restore, NOTIFY_RESEND and the transport's start.
//   The successor's exec and start-up come before it: the old daemon pauses nothing until the
//   new one says it is ready. They are in the restart's round trip, measured here.
// - save_us (ringfused's): saving the inode table and open files, within the pause; the state's
//   bytes and fds.
// Each restart's successor is started by the old daemon, which then exits 0: this process
// becomes a child subreaper, so that the successor, orphaned, is its child and is stopped
// (SIGTERM, unmount) and reaped at the end like the first daemon.
//
// crash: the same trees, served by ringfused under `ringfuse-ctl supervise` (the keeper next to
// this program), and per run ringfused killed with SIGKILL instead of restarted. The table gives
// the client pause (the longest call of the loop across the crash), the time from the kill to a
// daemon answering the control socket again, and the two walks of the tree after it: the first
// looks every name up again (the recovered daemon marked every cached name stale with one
// INC_EPOCH: its node ids are new), the second is answered from the kernel's cache. A stat call
// that fails across a crash fails the run: calls by path must survive it.
//
// compare: a side-by-side benchmark of FUSE daemons against the plain directory (issue 9).
//
//   ringfuse-bench compare [--rounds=3] [--seconds=5] [--workloads=stat,create,...]
//                  [--threads=2] [--files=10000] [--big-file-mib=512] [--output-dir=DIR]
//                  [--check] CONFIG...
//
// CONFIG is native, ringfused[:transport=...,cache=on|off,passthrough,depth=N,threads=N,
// o=NAME[=VALUE],trace=FILE,name=LABEL], floor[:transport=...] (the null filesystem, the limit a
// daemon can approach) or cmd:LABEL=TEMPLATE (any daemon run in the foreground, {src} and {mnt}
// replaced; see tools/compare_configs.h). For each round, each config in turn gets a fresh source
// tree, a mount, the workloads of tools/compare_workloads.h (stat and create once per --threads
// count, e.g. 1,2,4,8,16) with the daemon's CPU time, system calls and contention (futex calls,
// voluntary switches) around each, and an unmount; results.csv, results.md (medians, ratios,
// spread, and with two counts or more the scaling tables; printed at the end), chart.svg and
// scaling.svg go to --output-dir (default: a new directory here). A workload that fails shows its
// error in the table; --check fails the run when native or a ringfused config lacks a metric.
//
// stress: the real PassthroughFs driven in-process, no mount, through the dispatcher from many
// more threads than CPUs, to show a lock the daemon's threads share (tools/stress_run.h).
//
//   ringfuse-bench stress [--threads=1,2,8,64] [--seconds=3] [--files=10000] [--rounds=3]
//                  [--dir=/var/tmp] [--json=FILE]
//
// Exit status: 0; 1 when a publish, a restart or a recovery failed, a stat call across a restart
// or a crash failed, the
// daemon did not end cleanly, or a check failed;
// 2 for a bad command line; 77 (ctest's SKIP_RETURN_CODE) when this process cannot mount FUSE
// (not root, no /dev/fuse), after saying why; 130 after SIGINT, SIGTERM or SIGHUP, which stop it
// between two steps and still unmount, remove the temporary trees and restore the io_uring
// switch. --transport=uring-cmd turns FUSE-over-io_uring on for the run (and restores the old
// setting); auto leaves it as the machine has it, and the tables say what the daemon chose.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "base/uring_switch.h"
#include "daemon/revisions/invalidation.h"
#include "ringfuse/transport_options.h"
#include "tools/bench_daemon.h"
#include "tools/bench_handover.h"
#include "tools/bench_invalidate.h"
#include "tools/bench_notify_floor.h"
#include "tools/bench_system.h"
#include "tools/compare_chart.h"
#include "tools/compare_check.h"
#include "tools/compare_report.h"
#include "tools/compare_run.h"
#include "tools/compare_scaling_chart.h"
#include "tools/compare_threads.h"
#include "tools/compare_workloads.h"
#include "tools/daemon_meters.h"
#include "tools/hyphenated_flags.h"
#include "tools/null_server.h"
#include "tools/stress_options.h"
#include "tools/stress_run.h"

// Without a value on the command line, each subcommand takes its own default for these.
ABSL_FLAG(std::optional<std::string>, inodes, std::nullopt,
          "tree sizes in inodes below the root, comma-separated (invalidate: default 20,8000; "
          "handover: 0,10000,100000)");
ABSL_FLAG(std::optional<int>, runs, std::nullopt,
          "invalidate: publishes per method and tree size (default 100); notify-floor: runs "
          "(default 100); handover: restarts per tree size (default 10)");
ABSL_FLAG(std::string, methods, "entries,entries-batched,epoch,none",
          "invalidation methods to interleave (none: the negative control)");
ABSL_FLAG(std::optional<std::string>, transport, std::nullopt,
          "ringfused's transport: auto, threads, uring, uring-cmd (default auto; handover: "
          "threads, the one that hands over)");
ABSL_FLAG(int, count, 8000, "notify-floor: messages of each kind per run");
ABSL_FLAG(std::string, ringfused, "",
          "the daemon binary (default: ../daemon/ringfused next to this program)");
ABSL_FLAG(int, rounds, 3,
          "compare: rounds; every config runs once per round, interleaved (stress: every thread "
          "count)");
ABSL_FLAG(std::optional<int>, seconds, std::nullopt,
          "compare: seconds per workload (randread: per job count; default 5); stress: per thread "
          "count and round (default 3)");
ABSL_FLAG(std::string, workloads, "", "compare: workloads to run, comma-separated (default all)");
ABSL_FLAG(std::string, threads, "",
          "compare: client threads of the stat and create workloads, comma-separated: one "
          "measurement per count (default 2; e.g. 1,2,4,8,16); stress: the thread counts "
          "(default 1,2,8,64)");
ABSL_FLAG(int, files, 10000, "compare, stress: small files in the source tree's directory");
ABSL_FLAG(int, big_file_mib, 512, "compare: size of the big file (random and sequential I/O)");
ABSL_FLAG(std::string, output_dir, "", "compare: where results go (default: a new directory here)");
ABSL_FLAG(bool, check, false, "compare: fail unless native and ringfused have every metric");
ABSL_FLAG(std::string, dir, "/var/tmp", "stress: where the temporary tree is made");
ABSL_FLAG(std::string, json, "", "stress: also write the results to this file as JSON");

namespace ringfuse::tools {
namespace {

constexpr int kSkipped = 77;
constexpr int kMaxInodes = 1'000'000;
constexpr const char* kInvalidateInodes = "20,8000";
constexpr int kDefaultRuns = 100;
constexpr const char* kDefaultTransport = "auto";
constexpr const char* kHandoverInodes = "0,10000,100000";
constexpr int kHandoverRuns = 10;
constexpr const char* kHandoverTransport = "threads";
// A crash's first walk looks every name up again: 100,000 would take most of a minute a run.
constexpr const char* kCrashInodes = "0,10000";

int BadUsage(const std::string& what) {
  std::fprintf(stderr, "ringfuse-bench: %s (see --help)\n", what.c_str());
  return 2;
}

std::optional<std::vector<int>> ParseInodeCounts(const std::string& text, int least) {
  std::vector<int> counts;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int count = 0;
    if (!absl::SimpleAtoi(item, &count) || count < least || count > kMaxInodes) {
      return std::nullopt;
    }
    counts.push_back(count);
  }
  if (counts.empty()) return std::nullopt;
  return counts;
}

// The flags as a configuration, or the exit status of a usage error.
std::variant<InvalidateConfig, int> ReadConfig() {
  InvalidateConfig config;
  std::optional<std::vector<int>> counts =
      ParseInodeCounts(absl::GetFlag(FLAGS_inodes).value_or(kInvalidateInodes), 1);
  if (!counts) return BadUsage("--inodes takes sizes from 1 to 1000000, comma-separated");
  config.inode_counts = std::move(*counts);
  config.runs = absl::GetFlag(FLAGS_runs).value_or(kDefaultRuns);
  if (config.runs < 1) return BadUsage("--runs must be at least 1");
  config.methods = absl::StrSplit(absl::GetFlag(FLAGS_methods), ',', absl::SkipEmpty());
  if (config.methods.empty()) return BadUsage("--methods names no method");
  for (const std::string& method : config.methods) {
    if (!daemon::ParseInvalidationMethod(method)) {
      return BadUsage("unknown method " + method + ": entries, entries-batched, epoch or none");
    }
  }
  config.transport = absl::GetFlag(FLAGS_transport).value_or(kDefaultTransport);
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
  config.runs = absl::GetFlag(FLAGS_runs).value_or(kDefaultRuns);
  config.transport = absl::GetFlag(FLAGS_transport).value_or(kDefaultTransport);
  if (config.count < 1 || config.runs < 1) return BadUsage("--count and --runs must be positive");
  if (!ParseTransportKind(config.transport).ok()) {
    return BadUsage("--transport is auto, threads, uring or uring-cmd");
  }
  if (std::optional<std::string> why = WhyFuseMountsCannotRun()) {
    std::printf("ringfuse-bench: skipped: %s\n", why->c_str());
    return kSkipped;
  }
  base::UringSwitch uring;
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

// handover's, or crash's with `crash`.
std::variant<HandoverConfig, int> ReadHandoverConfig(bool crash) {
  HandoverConfig config;
  std::optional<std::vector<int>> counts = ParseInodeCounts(
      absl::GetFlag(FLAGS_inodes).value_or(crash ? kCrashInodes : kHandoverInodes), 0);
  if (!counts) return BadUsage("--inodes takes sizes from 0 to 1000000, comma-separated");
  config.inode_counts = std::move(*counts);
  config.runs = absl::GetFlag(FLAGS_runs).value_or(kHandoverRuns);
  if (config.runs < 1) return BadUsage("--runs must be at least 1");
  config.transport = absl::GetFlag(FLAGS_transport).value_or(kHandoverTransport);
  if (!ParseTransportKind(config.transport).ok()) {
    return BadUsage("--transport is auto, threads, uring or uring-cmd");
  }
  config.ringfused = absl::GetFlag(FLAGS_ringfused);
  if (config.ringfused.empty()) config.ringfused = RingfusedNextToThisProgram();
  config.ctl = CtlNextToThisProgram();
  return config;
}

int Handover(bool crash) {
  std::variant<HandoverConfig, int> config = ReadHandoverConfig(crash);
  if (const int* status = std::get_if<int>(&config)) return *status;
  if (std::optional<std::string> why = WhyFuseMountsCannotRun()) {
    std::printf("ringfuse-bench: skipped: %s\n", why->c_str());
    return kSkipped;
  }
  CatchStopSignals();
  return crash ? RunCrash(std::get<HandoverConfig>(config))
               : RunHandover(std::get<HandoverConfig>(config));
}

std::variant<CompareOptions, int> ReadCompareOptions(const std::vector<char*>& configs) {
  CompareOptions options;
  options.rounds = absl::GetFlag(FLAGS_rounds);
  const int seconds = absl::GetFlag(FLAGS_seconds).value_or(5);
  options.seconds = absl::Seconds(seconds);
  options.files = absl::GetFlag(FLAGS_files);
  options.big_file_mib = absl::GetFlag(FLAGS_big_file_mib);
  if (options.rounds < 1 || seconds < 1 || options.files < 1 || options.big_file_mib < 1) {
    return BadUsage("--rounds, --seconds, --files and --big-file-mib must be positive");
  }
  options.workloads = absl::StrSplit(absl::GetFlag(FLAGS_workloads), ',', absl::SkipEmpty());
  if (options.workloads.empty()) options.workloads = WorkloadNames();
  for (const std::string& workload : options.workloads) {
    const std::vector<std::string>& known = WorkloadNames();
    if (std::find(known.begin(), known.end(), workload) == known.end()) {
      return BadUsage("unknown workload " + workload);
    }
  }
  const std::string thread_counts = absl::GetFlag(FLAGS_threads);
  absl::StatusOr<std::vector<int>> threads = ParseThreadCounts(
      thread_counts.empty() ? std::to_string(kDefaultClientThreads) : thread_counts);
  if (!threads.ok()) return BadUsage(std::string(threads.status().message()));
  options.threads = std::move(*threads);
  std::string ringfused = absl::GetFlag(FLAGS_ringfused);
  const DaemonBinaries binaries{ringfused.empty() ? RingfusedNextToThisProgram() : ringfused,
                                "/proc/self/exe"};
  for (const char* text : configs) {
    absl::StatusOr<CompareConfig> config = ParseCompareConfig(text, binaries);
    if (!config.ok()) return BadUsage(std::string(config.status().message()));
    options.configs.push_back(std::move(*config));
  }
  if (options.configs.empty()) return BadUsage("compare needs at least one CONFIG");
  return options;
}

// --output-dir, made if needed, or a new ringfuse-compare-DATE-TIME here.
std::optional<std::string> MakeOutputDir() {
  std::string dir = absl::GetFlag(FLAGS_output_dir);
  if (dir.empty()) {
    char stamp[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", std::gmtime(&now));
    dir = std::string("ringfuse-compare-") + stamp;
  }
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    std::fprintf(stderr, "ringfuse-bench: %s: %s\n", dir.c_str(), error.message().c_str());
    return std::nullopt;
  }
  return std::filesystem::absolute(dir).string();
}

bool WriteText(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::trunc);
  file << text;
  return static_cast<bool>(file);
}

int Compare(const std::vector<char*>& configs, const std::string& command_line) {
  std::variant<CompareOptions, int> parsed = ReadCompareOptions(configs);
  if (const int* status = std::get_if<int>(&parsed)) return *status;
  CompareOptions& options = std::get<CompareOptions>(parsed);
  if (std::optional<std::string> why = WhyFuseMountsCannotRun()) {
    std::printf("ringfuse-bench: skipped: %s\n", why->c_str());
    return kSkipped;
  }
  std::optional<std::string> output_dir = MakeOutputDir();
  if (!output_dir) return 1;
  options.output_dir = *output_dir;
  std::fprintf(stderr, "ringfuse-bench compare: results in %s\n", output_dir->c_str());
  CatchStopSignals();
  const std::vector<Sample> samples = RunCompare(options);
  const std::string markdown = MarkdownReport(options, samples, command_line);
  const std::string scaling_chart = ScalingChartSvg(options, samples);
  if (!WriteText(*output_dir + "/results.csv", CsvText(samples)) ||
      !WriteText(*output_dir + "/results.md", markdown) ||
      !WriteText(*output_dir + "/chart.svg", ChartSvg(options, samples)) ||
      (!scaling_chart.empty() && !WriteText(*output_dir + "/scaling.svg", scaling_chart))) {
    std::fprintf(stderr, "ringfuse-bench: cannot write to %s\n", output_dir->c_str());
    return 1;
  }
  std::printf("%s", markdown.c_str());
  if (StopRequested()) return 130;
  if (absl::GetFlag(FLAGS_check)) {
    // The daemon's system calls and contention are asked for only where they can be counted.
    if (absl::Status checked = CheckOutput(options, UncountableHere()); !checked.ok()) {
      std::fprintf(stderr, "%s\n", std::string(checked.message()).c_str());
      return 1;
    }
  }
  return 0;
}

int Stress() {
  const std::string thread_counts = absl::GetFlag(FLAGS_threads);
  const std::string threads = thread_counts.empty() ? "1,2,8,64" : thread_counts;
  absl::StatusOr<StressOptions> options = ParseStressOptions(
      {threads, absl::GetFlag(FLAGS_seconds).value_or(3), absl::GetFlag(FLAGS_files),
       absl::GetFlag(FLAGS_rounds), absl::GetFlag(FLAGS_dir), absl::GetFlag(FLAGS_json)});
  if (!options.ok()) return BadUsage(std::string(options.status().message()));
  CatchStopSignals();
  return RunStress(*options);
}

std::string CommandLine(int argc, char** argv) {
  std::string text = "ringfuse-bench";
  for (int i = 1; i < argc; ++i) text += std::string(" ") + argv[i];
  return text;
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
      "                 [--transport=auto|threads|uring|uring-cmd]\n"
      "  ringfuse-bench handover [--inodes=0,10000,100000] [--runs=10] [--transport=threads]\n"
      "                 [--ringfused=PATH]\n"
      "  ringfuse-bench crash [--inodes=0,10000] [--runs=10] [--transport=threads]\n"
      "                 [--ringfused=PATH]\n"
      "  ringfuse-bench compare [--rounds=3] [--seconds=5] [--workloads=a,b,...] [--threads=2]\n"
      "                 [--files=10000] [--big-file-mib=512] [--output-dir=DIR] [--check] "
      "CONFIG...\n"
      "    CONFIG: native | ringfused[:transport=T,cache=on|off,passthrough,depth=N,threads=N,\n"
      "            o=NAME[=VALUE],trace=FILE,name=LABEL] | floor[:transport=T] | "
      "cmd:LABEL=TEMPLATE\n"
      "            (TEMPLATE: a command line, split on spaces, with {src} and {mnt})\n"
      "  ringfuse-bench stress [--threads=1,2,8,64] [--seconds=3] [--files=10000] [--rounds=3]\n"
      "                 [--dir=/var/tmp] [--json=FILE]   (in-process: no mount)");
  const std::string command_line = ringfuse::tools::CommandLine(argc, argv);
  ringfuse::tools::AcceptHyphenatedFlags(argc, argv);
  const std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() == 4 && std::string(args[1]) == "compare-serve-null") {
    return ringfuse::tools::ServeNullFs(args[2], 0, args[3]);  // the floor config's daemon
  }
  if (args.size() >= 2 && std::string(args[1]) == "compare") {
    return ringfuse::tools::Compare(std::vector<char*>(args.begin() + 2, args.end()), command_line);
  }
  if (args.size() == 2 && std::string(args[1]) == "invalidate") {
    return ringfuse::tools::Invalidate();
  }
  if (args.size() == 2 && std::string(args[1]) == "handover") {
    return ringfuse::tools::Handover(/*crash=*/false);
  }
  if (args.size() == 2 && std::string(args[1]) == "crash") {
    return ringfuse::tools::Handover(/*crash=*/true);
  }
  if (args.size() == 2 && std::string(args[1]) == "stress") {
    return ringfuse::tools::Stress();
  }
  if (args.size() == 2 && std::string(args[1]) == "notify-floor") {
    return ringfuse::tools::NotifyFloor();
  }
  std::fprintf(stderr, "%s\n", std::string(absl::ProgramUsageMessage()).c_str());
  return 2;
}
