#include "tools/compare_run.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/uring_switch.h"
#include "tools/bench_system.h"
#include "tools/compare_daemon.h"
#include "tools/compare_tree.h"
#include "tools/compare_workloads.h"
#include "tools/daemon_meters.h"
#include "tools/proc_stats.h"

namespace ringfuse::tools {
namespace {

// The first two lines of an error (a daemon's error ends with a colon and its log after it),
// short enough for a table cell.
std::string ErrorNote(const absl::Status& status) {
  std::string text(status.message());
  const size_t first_end = text.find('\n');
  if (first_end != std::string::npos) {
    text = text.substr(0, text.find('\n', first_end + 1));
    text[first_end] = ' ';
  }
  if (text.size() > 100) text = text.substr(0, 97) + "...";
  return "error: " + text;
}

// A workload at one client thread count (0: a workload without a choice).
struct WorkloadAt {
  std::string workload;
  int threads = 0;
  std::string Name() const {
    return threads > 0 ? absl::StrCat(workload, " x", threads) : workload;
  }
};

class RoundRecorder {
 public:
  RoundRecorder(int round, const CompareConfig& config, std::vector<Sample>& samples)
      : round_(round), config_(config), samples_(samples) {}

  void Value(const WorkloadAt& at, const std::string& metric, double value) {
    samples_.push_back({round_, config_.label, at.workload, metric, value, "", at.threads});
  }
  void Note(const WorkloadAt& at, const std::string& metric, const std::string& note) {
    samples_.push_back(
        {round_, config_.label, at.workload, metric, std::nullopt, note, at.threads});
  }
  // Every metric of every workload, and of the daemon, missing for the same reason.
  void NoteAll(const CompareOptions& options, const std::string& note) {
    for (const std::string& workload : options.workloads) {
      for (const int threads : ThreadCounts(workload, options.threads)) {
        NoteWorkload({workload, threads}, note);
      }
    }
    if (config_.kind == CompareConfig::Kind::kNative) return;
    for (const char* metric : {kRssMetric, kCleanStopMetric}) Note({kDaemonWorkload}, metric, note);
  }
  void NoteWorkload(const WorkloadAt& at, const std::string& note) {
    for (const std::string& metric : WorkloadMetricNames(at.workload)) Note(at, metric, note);
    if (config_.kind == CompareConfig::Kind::kNative) return;
    for (const char* metric : kDaemonPerOpMetrics) Note(at, metric, note);
  }
  void Progress(const std::string& what_ran, const std::string& what) const {
    std::fprintf(stderr, "round %d  %-32s %-11s %s\n", round_, config_.label.c_str(),
                 what_ran.c_str(), what.c_str());
  }

 private:
  int round_;
  const CompareConfig& config_;
  std::vector<Sample>& samples_;
};

std::string Describe(const std::vector<Metric>& metrics) {
  std::string text;
  for (const Metric& metric : metrics) {
    absl::StrAppendFormat(&text, "%s %.4g  ", metric.name, metric.value);
  }
  return text;
}

// One workload on a mounted config (pid > 0: the daemon whose CPU time, system calls and
// contention it costs).
void MeasureWorkload(const WorkloadAt& at, const WorkloadTarget& target, pid_t pid,
                     RoundRecorder& recorder) {
  std::optional<DaemonMeters> meters;
  if (pid > 0) meters.emplace(pid);
  absl::StatusOr<WorkloadResult> result = RunWorkload(at.workload, target);
  if (meters) meters->Stop();
  if (!result.ok()) {
    recorder.NoteWorkload(at, ErrorNote(result.status()));
    recorder.Progress(at.Name(), ErrorNote(result.status()));
    return;
  }
  std::vector<Metric> shown = result->metrics;
  const bool per_op = meters && result->operations > 0;
  if (per_op) {
    for (const Metric& metric : meters->PerOperation(result->operations)) shown.push_back(metric);
  }
  for (const Metric& metric : shown) recorder.Value(at, metric.name, metric.value);
  if (per_op) {
    for (const DaemonMeters::UncountedMetric& uncounted : meters->Uncounted()) {
      recorder.Note(at, uncounted.metric, uncounted.why);
    }
  }
  recorder.Progress(at.Name(), Describe(shown));
}

void RunWorkloads(const CompareOptions& options, const CompareConfig& config, WorkloadTarget target,
                  pid_t pid, RoundRecorder& recorder) {
  for (const std::string& workload : options.workloads) {
    for (const int threads : ThreadCounts(workload, options.threads)) {
      if (StopRequested()) return;
      const WorkloadAt at{workload, threads};
      if (config.kind == CompareConfig::Kind::kFloor && !FloorServes(workload)) {
        recorder.NoteWorkload(at, "n/a");
        continue;
      }
      if (threads > 0) target.threads = threads;
      MeasureWorkload(at, target, pid, recorder);
    }
  }
}

struct Scratch {
  std::string base;  // holds src/ (made and removed per config) and mnt/
  std::string source() const { return base + "/src"; }
  std::string mountpoint() const { return base + "/mnt"; }
};

void RunConfigRound(const CompareOptions& options, const CompareConfig& config, int round,
                    int index, const Scratch& scratch, std::vector<Sample>& samples) {
  RoundRecorder recorder(round, config, samples);
  absl::StatusOr<SourceTree> tree = SourceTree::Create(
      scratch.source(), options.files, options.big_file_mib, options.threads.back());
  if (!tree.ok()) return recorder.NoteAll(options, ErrorNote(tree.status()));
  WorkloadTarget target{scratch.source(),
                        scratch.source(),
                        options.files,
                        options.big_file_mib,
                        config.kind == CompareConfig::Kind::kFloor,
                        options.seconds};
  if (config.kind == CompareConfig::Kind::kNative) {
    return RunWorkloads(options, config, target, 0, recorder);
  }
  base::UringSwitch uring;  // the machine's setting comes back when this config is done
  if (config.needs_uring_switch) {
    if (absl::Status on = uring.TurnOn(); !on.ok()) {
      return recorder.NoteAll(options, ErrorNote(on));
    }
  }
  const std::string log =
      absl::StrFormat("%s/daemon-round%d-config%d.log", options.output_dir, round, index + 1);
  absl::StatusOr<MountedDaemon> daemon = MountedDaemon::Start(
      Substitute(config.argv, scratch.source(), scratch.mountpoint()), scratch.mountpoint(), log);
  if (!daemon.ok()) {
    recorder.Progress("mount", ErrorNote(daemon.status()));
    return recorder.NoteAll(options, ErrorNote(daemon.status()));
  }
  target.root = scratch.mountpoint();
  RunWorkloads(options, config, target, daemon->pid(), recorder);
  if (std::optional<double> rss = PeakRssMib(daemon->pid())) {
    recorder.Value({kDaemonWorkload}, kRssMetric, *rss);
  } else {
    recorder.Note({kDaemonWorkload}, kRssMetric, "error: the daemon is gone");
  }
  if (absl::Status stopped = daemon->Stop(); !stopped.ok()) {
    std::fprintf(stderr, "%s: %s\n", config.label.c_str(), std::string(stopped.message()).c_str());
    recorder.Note({kDaemonWorkload}, kCleanStopMetric, ErrorNote(stopped));
  } else {
    recorder.Value({kDaemonWorkload}, kCleanStopMetric, 1);
  }
}

}  // namespace

std::vector<Sample> RunCompare(const CompareOptions& options) {
  std::vector<Sample> samples;
  // On disk (ext4 here), not tmpfs: native must be a real filesystem for O_DIRECT and for
  // page-cache eviction to mean what they say.
  char base[] = "/var/tmp/ringfuse-compare.XXXXXX";
  if (::mkdtemp(base) == nullptr) {
    std::perror("ringfuse-bench: mkdtemp /var/tmp");
    return samples;
  }
  const Scratch scratch{base};
  ::mkdir(scratch.mountpoint().c_str(), 0755);
  for (int round = 1; round <= options.rounds && !StopRequested(); ++round) {
    for (size_t i = 0; i < options.configs.size() && !StopRequested(); ++i) {
      RunConfigRound(options, options.configs[i], round, static_cast<int>(i), scratch, samples);
    }
  }
  ::rmdir(scratch.mountpoint().c_str());
  ::rmdir(base);
  return samples;
}

}  // namespace ringfuse::tools
