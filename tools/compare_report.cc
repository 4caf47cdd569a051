#include "tools/compare_report.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "tools/compare_scaling.h"
#include "tools/compare_workloads.h"

namespace ringfuse::tools {
namespace {

// A result better than native by more than this is suspicious, not a win (see BeatsNative).
constexpr double kBeatsNativeMargin = 1.05;

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\"", "\"\""}}), "\"");
}

bool LowerIsBetter(const std::string& metric) { return absl::EndsWith(metric, "_us"); }

// Going through FUSE adds work to every operation, so a config faster than the plain directory
// was served from a cache the native run did not have (or skipped O_DIRECT): a result to check,
// not a win. The daemon's own rows have nothing native to compare with.
bool BeatsNative(const ReportRow& row, double value, double native) {
  if (IsDaemonMetric(row.metric)) return false;
  if (LowerIsBetter(row.metric)) return value * kBeatsNativeMargin < native;
  return value > native * kBeatsNativeMargin;
}

std::string MedianCell(const ReportRow& row, const Cell& cell, const Cell& native,
                       const Cell& reference, bool is_native, bool is_reference) {
  if (!cell.median) return Escape(cell.note);
  if (row.metric == kCleanStopMetric) return "yes";  // a failed stop is an error note instead
  std::string text = Number(*cell.median);
  // Counts near 0 where nothing waits: their ratios (7,000x of 0.0004) would say nothing.
  if (IsContentionMetric(row.metric)) return text;
  std::vector<std::string> ratios;
  const std::optional<std::string> to_native = Ratio(*cell.median, native);
  if (!is_native && to_native) ratios.push_back(*to_native + " n");
  const std::optional<std::string> to_reference = Ratio(*cell.median, reference);
  if (!is_reference && to_reference) ratios.push_back(*to_reference + " d");
  if (!ratios.empty()) absl::StrAppend(&text, " (", absl::StrJoin(ratios, ", "), ")");
  if (!is_native && native.median && BeatsNative(row, *cell.median, *native.median)) {
    absl::StrAppend(&text, " **beats native: check caching**");
  }
  return text;
}

std::string SpreadCell(const Cell& cell) {
  if (cell.spread_percent) return absl::StrFormat("%.1f%%", *cell.spread_percent);
  return cell.median ? "–" : Escape(cell.note);
}

// A table of one row per ReportRow and one column per config, `cell` writing each cell.
std::string Table(const CompareOptions& options,
                  const std::function<std::string(const ReportRow&, const std::string&)>& cell) {
  const std::vector<std::string> labels = ConfigLabels(options);
  std::string text = TableHeader("workload, metric", labels);
  for (const ReportRow& row : ReportRows(options.workloads, options.threads)) {
    absl::StrAppend(&text, "| ", RowTitle(row), " |");
    for (const std::string& label : labels) absl::StrAppend(&text, " ", cell(row, label), " |");
    text += "\n";
  }
  return text;
}

std::string MediansTable(const CompareOptions& options, const std::vector<Sample>& samples) {
  const std::optional<std::string> reference = ReferenceDaemon(options);
  const std::vector<std::string> labels = ConfigLabels(options);
  const bool has_native = std::find(labels.begin(), labels.end(), "native") != labels.end();
  return Table(options, [&](const ReportRow& row, const std::string& label) {
    const Cell native = has_native ? Summarize(samples, "native", row) : Cell{};
    const Cell reference_cell = reference ? Summarize(samples, *reference, row) : Cell{};
    return MedianCell(row, Summarize(samples, label, row), native, reference_cell,
                      label == "native", reference && label == *reference);
  });
}

std::string SpreadTable(const CompareOptions& options, const std::vector<Sample>& samples) {
  return Table(options, [&](const ReportRow& row, const std::string& label) {
    if (row.metric == kCleanStopMetric) return std::string("–");  // yes or an error: no spread
    return SpreadCell(Summarize(samples, label, row));
  });
}

}  // namespace

std::vector<ReportRow> ReportRows(const std::vector<std::string>& workloads,
                                  const std::vector<int>& threads) {
  std::vector<ReportRow> rows;
  for (const std::string& workload : workloads) {
    for (const int count : ThreadCounts(workload, threads)) {
      for (const std::string& metric : WorkloadMetricNames(workload)) {
        rows.push_back({workload, metric, count});
      }
      for (const char* metric : kDaemonPerOpMetrics) rows.push_back({workload, metric, count});
    }
  }
  rows.push_back({kDaemonWorkload, kRssMetric});
  rows.push_back({kDaemonWorkload, kCleanStopMetric});
  return rows;
}

std::string RowTitle(const ReportRow& row) {
  static const auto* workloads =
      new std::map<std::string, std::string>{{"stat", "stat storm"},
                                             {"create", "create+unlink"},
                                             {"readdir", "readdir of the files"},
                                             {"null", "null round trip (stat of one file)"},
                                             {"randread", "4k O_DIRECT random read"},
                                             {"seqread", "1 MiB sequential read"},
                                             {"seqwrite", "1 MiB sequential write + fsync"},
                                             {kDaemonWorkload, "daemon"}};
  static const auto* metrics =
      new std::map<std::string, std::string>{{"ops_per_s", "ops/s"},
                                             {"passes_per_s", "passes/s"},
                                             {"p50_us", "p50 us"},
                                             {"p99_us", "p99 us"},
                                             {"p999_us", "p99.9 us"},
                                             {"iops_1job", "1 job, IOPS"},
                                             {"iops_2jobs", "2 jobs, IOPS"},
                                             {"mib_per_s", "MiB/s"},
                                             {kCpuMetric, "daemon CPU us/op"},
                                             {kSyscallsMetric, "daemon system calls/op"},
                                             {kFutexWaitsMetric, "daemon futex waits/op"},
                                             {kFutexWakesMetric, "daemon futex wakes/op"},
                                             {kSwitchesMetric, "daemon voluntary switches/op"},
                                             {kRssMetric, "peak RSS MiB"},
                                             {kCleanStopMetric, "stopped cleanly"}};
  std::string threads;
  if (row.threads > 0) {
    threads = absl::StrCat(", ", row.threads, row.threads == 1 ? " thread" : " threads");
  }
  return absl::StrCat(workloads->at(row.workload), threads, ", ", metrics->at(row.metric));
}

std::vector<std::string> ConfigLabels(const CompareOptions& options) {
  std::vector<std::string> labels;
  for (const CompareConfig& config : options.configs) labels.push_back(config.label);
  return labels;
}

std::string TableHeader(const std::string& first_column, const std::vector<std::string>& labels) {
  std::string text = absl::StrCat("| ", first_column, " |");
  for (const std::string& label : labels) absl::StrAppend(&text, " ", Escape(label), " |");
  absl::StrAppend(&text, "\n|---|");
  for (size_t i = 0; i < labels.size(); ++i) absl::StrAppend(&text, "---:|");
  return text + "\n";
}

bool IsDaemonMetric(const std::string& metric) {
  return absl::StartsWith(metric, "daemon_") || metric == kRssMetric || metric == kCleanStopMetric;
}

bool IsContentionMetric(const std::string& metric) {
  return metric == kFutexWaitsMetric || metric == kFutexWakesMetric || metric == kSwitchesMetric;
}

std::string Number(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e6) return absl::StrFormat("%.3gM", value / 1e6);
  if (magnitude >= 1e4) return absl::StrFormat("%.1fk", value / 1e3);
  if (magnitude >= 1e3) return absl::StrFormat("%.2fk", value / 1e3);
  if (magnitude >= 100) return absl::StrFormat("%.0f", value);
  if (magnitude >= 10) return absl::StrFormat("%.1f", value);
  // Two significant digits below 0.1: a futex call every 400 operations is 0.0025, not 0.00.
  if (magnitude >= 0.1 || value == 0) return absl::StrFormat("%.2f", value);
  return absl::StrFormat("%.2g", value);
}

std::string Escape(const std::string& text) { return absl::StrReplaceAll(text, {{"|", "\\|"}}); }

// A reference of 0 (no daemon CPU: the kernel's cache answered) has no ratio.
std::optional<std::string> Ratio(double value, const Cell& reference) {
  if (!(reference.median > 0)) return std::nullopt;
  return absl::StrFormat("%.2fx", value / *reference.median);
}

Cell Summarize(const std::vector<Sample>& samples, const std::string& config,
               const ReportRow& row) {
  std::vector<double> values;
  std::string error, other_note;
  for (const Sample& sample : samples) {
    if (sample.config != config || sample.workload != row.workload || sample.metric != row.metric ||
        sample.threads != row.threads) {
      continue;
    }
    if (sample.value) {
      values.push_back(*sample.value);
    } else if (absl::StartsWith(sample.note, "error")) {
      if (error.empty()) error = sample.note;
    } else if (other_note.empty()) {
      other_note = sample.note;
    }
  }
  Cell cell;
  if (!error.empty()) return Cell{std::nullopt, std::nullopt, error};
  if (values.empty())
    return Cell{std::nullopt, std::nullopt, other_note.empty() ? "–" : other_note};
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  cell.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  if (n >= 2 && values.front() > 0)
    cell.spread_percent = (values.back() / values.front() - 1) * 100;
  return cell;
}

std::optional<std::string> ReferenceDaemon(const CompareOptions& options) {
  for (const CompareConfig& config : options.configs) {
    if (config.kind != CompareConfig::Kind::kNative) return config.label;
  }
  return std::nullopt;
}

std::string CsvText(const std::vector<Sample>& samples) {
  std::string text = "round,config,workload,threads,metric,value\n";
  for (const Sample& sample : samples) {
    const std::string value = sample.value ? absl::StrFormat("%.6g", *sample.value) : sample.note;
    const std::string threads = sample.threads > 0 ? absl::StrCat(sample.threads) : "";
    absl::StrAppend(&text, sample.round, ",", CsvField(sample.config), ",", sample.workload, ",",
                    threads, ",", sample.metric, ",", CsvField(value), "\n");
  }
  return text;
}

std::string MarkdownReport(const CompareOptions& options, const std::vector<Sample>& samples,
                           const std::string& command_line) {
  const std::optional<std::string> reference = ReferenceDaemon(options);
  std::string text = absl::StrFormat(
      "# ringfuse-bench compare\n\n`%s`\n\n%d round(s), %s per workload, %d small files, "
      "%d MiB big file. Medians over rounds; in parentheses the ratio against native (n) and "
      "against %s (d). Lower is better for us, CPU, system call, futex, switch and RSS rows. The "
      "floor serves only its one file: its stat storm stats that one file; its other workloads "
      "are n/a.\n\n",
      command_line, options.rounds, absl::FormatDuration(options.seconds), options.files,
      options.big_file_mib, reference ? Escape(*reference) : "(no daemon config)");
  absl::StrAppend(&text, MediansTable(options, samples));
  absl::StrAppend(&text, "\nSpread between rounds (max/min - 1):\n\n",
                  SpreadTable(options, samples));
  absl::StrAppend(&text, ScalingSection(options, samples));
  return text;
}

}  // namespace ringfuse::tools
