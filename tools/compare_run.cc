#include "tools/compare_run.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/bench_system.h"
#include "tools/compare_daemon.h"
#include "tools/compare_tree.h"
#include "tools/compare_workloads.h"
#include "tools/proc_stats.h"
#include "transport/uring_switch.h"

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

class RoundRecorder {
 public:
  RoundRecorder(int round, const CompareConfig& config, std::vector<Sample>& samples)
      : round_(round), config_(config), samples_(samples) {}

  void Value(const std::string& workload, const std::string& metric, double value) {
    samples_.push_back({round_, config_.label, workload, metric, value, ""});
  }
  void Note(const std::string& workload, const std::string& metric, const std::string& note) {
    samples_.push_back({round_, config_.label, workload, metric, std::nullopt, note});
  }
  // Every metric of every workload, and of the daemon, missing for the same reason.
  void NoteAll(const std::vector<std::string>& workloads, const std::string& note) {
    for (const std::string& workload : workloads) NoteWorkload(workload, note);
    if (config_.kind == CompareConfig::Kind::kNative) return;
    for (const char* metric : {kRssMetric, kCleanStopMetric}) Note(kDaemonWorkload, metric, note);
  }
  void NoteWorkload(const std::string& workload, const std::string& note) {
    for (const std::string& metric : WorkloadMetricNames(workload)) Note(workload, metric, note);
    if (config_.kind != CompareConfig::Kind::kNative) Note(workload, kCpuMetric, note);
  }
  void Progress(const std::string& workload, const std::string& what) const {
    std::fprintf(stderr, "round %d  %-32s %-9s %s\n", round_, config_.label.c_str(),
                 workload.c_str(), what.c_str());
  }

 private:
  int round_;
  const CompareConfig& config_;
  std::vector<Sample>& samples_;
};

std::string Describe(const WorkloadResult& result, std::optional<double> cpu_per_op) {
  std::string text;
  for (const Metric& metric : result.metrics) {
    absl::StrAppendFormat(&text, "%s %.4g  ", metric.name, metric.value);
  }
  if (cpu_per_op) absl::StrAppendFormat(&text, "daemon CPU %.3g us/op", *cpu_per_op);
  return text;
}

// One workload on a mounted config (pid > 0: the daemon whose CPU time it costs).
void MeasureWorkload(const std::string& workload, const WorkloadTarget& target, pid_t pid,
                     RoundRecorder& recorder) {
  const double cpu_before = pid > 0 ? ProcessCpuMicros(pid) : 0;
  absl::StatusOr<WorkloadResult> result = RunWorkload(workload, target);
  const double cpu_us = pid > 0 ? ProcessCpuMicros(pid) - cpu_before : 0;
  if (!result.ok()) {
    recorder.NoteWorkload(workload, ErrorNote(result.status()));
    recorder.Progress(workload, ErrorNote(result.status()));
    return;
  }
  for (const Metric& metric : result->metrics) recorder.Value(workload, metric.name, metric.value);
  std::optional<double> cpu_per_op;
  if (pid > 0 && result->operations > 0) {
    cpu_per_op = cpu_us / result->operations;
    recorder.Value(workload, kCpuMetric, *cpu_per_op);
  }
  recorder.Progress(workload, Describe(*result, cpu_per_op));
}

void RunWorkloads(const CompareOptions& options, const CompareConfig& config,
                  const WorkloadTarget& target, pid_t pid, RoundRecorder& recorder) {
  for (const std::string& workload : options.workloads) {
    if (StopRequested()) return;
    if (config.kind == CompareConfig::Kind::kFloor && !FloorServes(workload)) {
      recorder.NoteWorkload(workload, "n/a");
      continue;
    }
    MeasureWorkload(workload, target, pid, recorder);
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
  absl::StatusOr<SourceTree> tree =
      SourceTree::Create(scratch.source(), options.files, options.big_file_mib);
  if (!tree.ok()) return recorder.NoteAll(options.workloads, ErrorNote(tree.status()));
  WorkloadTarget target{scratch.source(),
                        scratch.source(),
                        options.files,
                        options.big_file_mib,
                        config.kind == CompareConfig::Kind::kFloor,
                        options.seconds};
  if (config.kind == CompareConfig::Kind::kNative) {
    return RunWorkloads(options, config, target, 0, recorder);
  }
  internal::UringSwitch uring;  // the machine's setting comes back when this config is done
  if (config.needs_uring_switch) {
    if (absl::Status on = uring.TurnOn(); !on.ok()) {
      return recorder.NoteAll(options.workloads, ErrorNote(on));
    }
  }
  const std::string log =
      absl::StrFormat("%s/daemon-round%d-config%d.log", options.output_dir, round, index + 1);
  absl::StatusOr<MountedDaemon> daemon = MountedDaemon::Start(
      Substitute(config.argv, scratch.source(), scratch.mountpoint()), scratch.mountpoint(), log);
  if (!daemon.ok()) {
    recorder.Progress("mount", ErrorNote(daemon.status()));
    return recorder.NoteAll(options.workloads, ErrorNote(daemon.status()));
  }
  target.root = scratch.mountpoint();
  RunWorkloads(options, config, target, daemon->pid(), recorder);
  if (std::optional<double> rss = PeakRssMib(daemon->pid())) {
    recorder.Value(kDaemonWorkload, kRssMetric, *rss);
  } else {
    recorder.Note(kDaemonWorkload, kRssMetric, "error: the daemon is gone");
  }
  if (absl::Status stopped = daemon->Stop(); !stopped.ok()) {
    std::fprintf(stderr, "%s: %s\n", config.label.c_str(), std::string(stopped.message()).c_str());
    recorder.Note(kDaemonWorkload, kCleanStopMetric, ErrorNote(stopped));
  } else {
    recorder.Value(kDaemonWorkload, kCleanStopMetric, 1);
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
