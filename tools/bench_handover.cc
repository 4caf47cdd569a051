#include "tools/bench_handover.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/deadline.h"
#include "base/errno_status.h"
#include "tools/bench_daemon.h"
#include "tools/bench_system.h"
#include "tools/bench_tree.h"
#include "tools/handover_report.h"
#include "tools/stat_loop.h"

namespace ringfuse::tools {
namespace {

// Long enough that nothing the walk cached expires during the runs; a missing name is never
// cached, so that a stat of it is a LOOKUP the daemon answers every time.
const std::vector<std::string> kMountOptions = {"entry_timeout=3600", "attr_timeout=3600",
                                                "negative_timeout=0"};
// The stat loop runs from this long before the restart request...
constexpr absl::Duration kLead = absl::Milliseconds(20);
// ...until this long after its reply, so that a call the new daemon answers late is counted.
constexpr absl::Duration kTail = absl::Milliseconds(100);
constexpr const char* kMissingName = "no-such-entry";

// The loop's calls: cached entries the kernel answers alone (the root, and the tree's first,
// middle and last entries), a GETATTR of a node the new daemon restored, a LOOKUP of a missing
// name. The last two wait for the daemon, and so show the pause.
std::vector<StatProbe> Probes(const std::string& mountpoint, const Tree& tree) {
  std::vector<StatProbe> probes = {{mountpoint, StatProbe::Kind::kCached}};
  std::string refetched = mountpoint;
  if (!tree.paths.empty()) {
    const size_t last = tree.paths.size() - 1;
    for (const size_t index : {size_t{0}, last / 2, last}) {
      probes.push_back({mountpoint + "/" + tree.paths[index], StatProbe::Kind::kCached});
    }
    refetched = mountpoint + "/" + tree.paths[last];
  }
  probes.push_back({refetched, StatProbe::Kind::kRefetch});
  probes.push_back({mountpoint + "/" + kMissingName, StatProbe::Kind::kMissing});
  return probes;
}

absl::StatusOr<ControlAnswer> Status(const DaemonProcess& daemon) { return daemon.Ask("status"); }

absl::StatusOr<int> Nodes(const DaemonProcess& daemon) {
  absl::StatusOr<ControlAnswer> status = Status(daemon);
  if (!status.ok()) return status.status();
  absl::StatusOr<double> nodes = NumberField(status->fields, "nodes");
  if (!nodes.ok()) return nodes.status();
  return static_cast<int>(*nodes);
}

// After a restart: the daemon that answers is the one the reply named, its table has kept every
// node, and a cached entry still stats.
absl::Status CheckServedOn(const DaemonProcess& daemon, int nodes, const std::string& cached) {
  absl::StatusOr<ControlAnswer> status = Status(daemon);
  if (!status.ok()) return status.status();
  absl::StatusOr<double> pid = NumberField(status->fields, "pid");
  if (!pid.ok()) return pid.status();
  if (static_cast<pid_t>(*pid) != daemon.pid()) {
    return absl::InternalError(
        absl::StrFormat("pid %.0f answers, not pid %d that the restart named", *pid, daemon.pid()));
  }
  absl::StatusOr<double> now = NumberField(status->fields, "nodes");
  if (!now.ok()) return now.status();
  if (*now < nodes) {
    return absl::InternalError(absl::StrFormat(
        "the inode table has %.0f nodes after the restart, %d before", *now, nodes));
  }
  struct stat st;
  if (::lstat(cached.c_str(), &st) != 0) return base::ErrnoStatus(errno, cached);
  return absl::OkStatus();
}

absl::Status ReadReply(const daemon::ControlFields& fields, HandoverSample& sample) {
  for (auto [name, field] : {std::pair{"pause_us", &HandoverSample::pause_us},
                             std::pair{"save_us", &HandoverSample::save_us},
                             std::pair{"state_bytes", &HandoverSample::state_bytes},
                             std::pair{"state_fds", &HandoverSample::state_fds}}) {
    absl::StatusOr<double> value = NumberField(fields, name);
    if (!value.ok()) return value.status();
    sample.*field = *value;
  }
  return absl::OkStatus();
}

// Runs `replace` (a restart or a crash) inside a stat loop, from kLead before it to kTail after.
template <typename Replace>
auto AcrossStatLoop(const std::vector<StatProbe>& probes, Replace replace) {
  StatLoop loop(probes);
  absl::SleepFor(kLead);
  auto replaced = replace();
  absl::SleepFor(kTail);
  const StatLoopResult seen = loop.Stop();
  return std::pair{seen, std::move(replaced)};
}

// What the loop saw, into `sample`; a failed call is reported with `what` it was across.
template <typename Sample>
void Record(const StatLoopResult& seen, const std::string& what, Sample& sample) {
  sample.client_max_us = seen.max_us;
  sample.cached_max_us = seen.max_cached_us;
  sample.calls = static_cast<double>(seen.calls);
  sample.failed_calls = seen.failed_calls;
  if (seen.failed_calls > 0) {
    std::fprintf(stderr, "FAILED: %d stat call(s) across %s, the first %s\n", seen.failed_calls,
                 what.c_str(), seen.first_failure.c_str());
  }
}

// One restart with the stat loop across it.
absl::StatusOr<HandoverSample> MeasureRestart(DaemonProcess& daemon,
                                              const std::vector<StatProbe>& probes) {
  auto [seen, restarted] = AcrossStatLoop(probes, [&] { return daemon.Restart(); });
  if (!restarted.ok()) return restarted.status();
  HandoverSample sample;
  if (absl::Status read = ReadReply(restarted->fields, sample); !read.ok()) return read;
  sample.round_trip_us = absl::ToDoubleMicroseconds(restarted->round_trip);
  Record(seen, absl::StrFormat("the restart to pid %d", daemon.pid()), sample);
  return sample;
}

absl::Status MakeDirectories(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    if (::mkdir(path.c_str(), 0755) != 0) return base::ErrnoStatus(errno, path);
  }
  return absl::OkStatus();
}

// The walk's nodes, which the runs must keep: one per inode and the root.
absl::StatusOr<int> Load(const DaemonProcess& daemon, const std::string& mountpoint,
                         const Tree& tree, int inodes) {
  if (absl::Status walked = Walk(mountpoint, tree); !walked.ok()) return walked;
  absl::StatusOr<int> nodes = Nodes(daemon);
  if (!nodes.ok()) return nodes.status();
  if (*nodes < inodes + 1) {
    return absl::InternalError(absl::StrFormat(
        "after a walk of %d inodes ringfused's table holds %d nodes: the kernel forgot some",
        inodes, *nodes));
  }
  return *nodes;
}

// One crash with the stat loop across it, then the walks after it.
absl::StatusOr<CrashSample> MeasureCrash(DaemonProcess& daemon, const std::string& mountpoint,
                                         const Tree& tree, const std::vector<StatProbe>& probes) {
  auto [seen, recovered] = AcrossStatLoop(probes, [&] { return daemon.KillAndAwaitRecovery(); });
  if (!recovered.ok()) return recovered.status();
  CrashSample sample;
  sample.recovery_us = absl::ToDoubleMicroseconds(*recovered);
  Record(seen, "the crash", sample);
  for (double* walk : {&sample.first_walk_us, &sample.cached_walk_us}) {
    const base::Stopwatch walking;
    if (absl::Status walked = Walk(mountpoint, tree); !walked.ok()) return walked;
    *walk = absl::ToDoubleMicroseconds(walking.elapsed());
  }
  return sample;
}

// A tree of `inodes` served by ringfused (under the keeper for a crash), walked once so that the
// kernel caches every name.
struct ServedTree {
  TempDir dir;
  std::string mountpoint;
  Tree tree;
  DaemonProcess daemon;
  int nodes = 0;
};

absl::StatusOr<ServedTree> ServeTree(const HandoverConfig& config, int inodes,
                                     const std::string& keeper) {
  absl::StatusOr<TempDir> dir = TempDir::Create("ringfuse-bench");
  if (!dir.ok()) return dir.status();
  const std::string source = dir->path() + "/source", mountpoint = dir->path() + "/mnt";
  if (absl::Status made = MakeDirectories({source, mountpoint}); !made.ok()) return made;
  const base::Stopwatch building;
  absl::StatusOr<Tree> tree = BuildTree(source, inodes);
  if (!tree.ok()) return tree.status();
  const absl::Duration built = building.elapsed();
  absl::StatusOr<DaemonProcess> daemon =
      DaemonProcess::Start({.binary = config.ringfused,
                            .source = source,
                            .mountpoint = mountpoint,
                            .transport = config.transport,
                            .mount_options = kMountOptions,
                            .log = dir->path() + "/ringfused.log",
                            .keeper = keeper});
  if (!daemon.ok()) return daemon.status();
  const base::Stopwatch walking;
  absl::StatusOr<int> nodes = Load(*daemon, mountpoint, *tree, inodes);
  if (!nodes.ok()) return nodes.status();
  std::printf(
      "%d inodes: %d directories, %d files, %d symlinks, built in %.1f s, walked in %.1f s; "
      "%d nodes; ringfused: %s\n",
      inodes, tree->directories, tree->files, tree->symlinks, absl::ToDoubleSeconds(built),
      absl::ToDoubleSeconds(walking.elapsed()), *nodes, daemon->TransportChoice().c_str());
  std::fflush(stdout);
  return ServedTree{std::move(*dir), mountpoint, std::move(*tree), std::move(*daemon), *nodes};
}

absl::StatusOr<HandoverResult> MeasureRestarts(const HandoverConfig& config, int inodes) {
  absl::StatusOr<ServedTree> served = ServeTree(config, inodes, "");
  if (!served.ok()) return served.status();
  HandoverResult result{inodes, served->nodes, {}};
  const std::vector<StatProbe> probes = Probes(served->mountpoint, served->tree);
  for (int run = 0; run < config.runs && !StopRequested(); ++run) {
    absl::StatusOr<HandoverSample> sample = MeasureRestart(served->daemon, probes);
    if (!sample.ok()) return sample.status();
    result.samples.push_back(*sample);
    if (absl::Status checked = CheckServedOn(served->daemon, served->nodes, probes.front().path);
        !checked.ok()) {
      return checked;
    }
  }
  if (absl::Status stopped = served->daemon.Stop(); !stopped.ok()) return stopped;
  return result;
}

absl::StatusOr<CrashResult> MeasureCrashes(const HandoverConfig& config, int inodes) {
  absl::StatusOr<ServedTree> served = ServeTree(config, inodes, config.ctl);
  if (!served.ok()) return served.status();
  CrashResult result{inodes, served->nodes, {}};
  const std::vector<StatProbe> probes = Probes(served->mountpoint, served->tree);
  for (int run = 0; run < config.runs && !StopRequested(); ++run) {
    absl::StatusOr<CrashSample> sample =
        MeasureCrash(served->daemon, served->mountpoint, served->tree, probes);
    if (!sample.ok()) return sample.status();
    result.samples.push_back(*sample);
  }
  if (absl::Status stopped = served->daemon.Stop(); !stopped.ok()) return stopped;
  return result;
}

template <typename Sample>
int FailedCalls(const std::vector<ReplacementResult<Sample>>& results) {
  int failed = 0;
  for (const auto& result : results) {
    for (const Sample& sample : result.samples) failed += sample.failed_calls;
  }
  return failed;
}

// Runs `measure` for each tree size and prints the table; the exit status RunHandover says.
template <typename Sample, typename Measure, typename MakeTable>
int RunEach(const HandoverConfig& config, const char* what, Measure measure, MakeTable make_table) {
  std::vector<ReplacementResult<Sample>> results;
  absl::Status status;
  for (const int inodes : config.inode_counts) {
    if (StopRequested()) break;
    absl::StatusOr<ReplacementResult<Sample>> result = measure(config, inodes);
    if (!result.ok()) {
      status = result.status();
      break;
    }
    results.push_back(std::move(*result));
  }
  if (!results.empty()) {
    std::printf("\n%s under a stat loop, --transport=%s, %d runs per tree size\n%s", what,
                config.transport.c_str(), config.runs, make_table(results).c_str());
  }
  if (StopRequested()) return std::fprintf(stderr, "ringfuse-bench: stopped by a signal\n"), 130;
  if (!status.ok()) {
    std::fprintf(stderr, "ringfuse-bench: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  if (const int failed = FailedCalls(results); failed > 0) {
    std::fprintf(stderr, "ringfuse-bench: %d stat call(s) failed (see FAILED above)\n", failed);
    return 1;
  }
  return 0;
}

}  // namespace

int RunHandover(const HandoverConfig& config) {
  return RunEach<HandoverSample>(config, "ringfuse-ctl restart", MeasureRestarts, HandoverTable);
}

int RunCrash(const HandoverConfig& config) {
  return RunEach<CrashSample>(config, "kill -9 under ringfuse-ctl supervise", MeasureCrashes,
                              CrashTable);
}

}  // namespace ringfuse::tools
