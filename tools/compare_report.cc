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
#include "tools/compare_workloads.h"

namespace ringfuse::tools {
namespace {

// A result better than native by more than this is suspicious, not a win (see BeatsNative).
constexpr double kBeatsNativeMargin = 1.05;

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\"", "\"\""}}), "\"");
}

// Three significant digits, with k and M: 62.8k, 1.35M, 188, 14.5.
std::string Number(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e6) return absl::StrFormat("%.3gM", value / 1e6);
  if (magnitude >= 1e4) return absl::StrFormat("%.1fk", value / 1e3);
  if (magnitude >= 1e3) return absl::StrFormat("%.2fk", value / 1e3);
  if (magnitude >= 100) return absl::StrFormat("%.0f", value);
  if (magnitude >= 10) return absl::StrFormat("%.1f", value);
  return absl::StrFormat("%.2f", value);
}

bool LowerIsBetter(const std::string& metric) { return absl::EndsWith(metric, "_us"); }

// Going through FUSE adds work to every operation, so a config faster than the plain directory
// was served from a cache the native run did not have (or skipped O_DIRECT): a result to check,
// not a win. The daemon's own rows have nothing native to compare with.
bool BeatsNative(const ReportRow& row, double value, double native) {
  if (row.workload == kDaemonWorkload || row.metric == kCpuMetric) return false;
  if (LowerIsBetter(row.metric)) return value * kBeatsNativeMargin < native;
  return value > native * kBeatsNativeMargin;
}

std::string Escape(const std::string& text) { return absl::StrReplaceAll(text, {{"|", "\\|"}}); }

std::string Ratio(double value, const Cell& reference) {
  return absl::StrFormat("%.2fx", value / *reference.median);
}

std::string MedianCell(const ReportRow& row, const Cell& cell, const Cell& native,
                       const Cell& reference, bool is_native, bool is_reference) {
  if (!cell.median) return Escape(cell.note);
  if (row.metric == kCleanStopMetric) return "yes";  // a failed stop is an error note instead
  std::string text = Number(*cell.median);
  std::vector<std::string> ratios;
  // A reference of 0 (no daemon CPU: the kernel's cache answered) has no ratio.
  if (!is_native && native.median > 0) ratios.push_back(Ratio(*cell.median, native) + " n");
  if (!is_reference && reference.median > 0) {
    ratios.push_back(Ratio(*cell.median, reference) + " d");
  }
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

std::string HeaderLines(const std::vector<std::string>& labels) {
  std::string text = "| workload, metric |";
  for (const std::string& label : labels) absl::StrAppend(&text, " ", Escape(label), " |");
  absl::StrAppend(&text, "\n|---|");
  for (size_t i = 0; i < labels.size(); ++i) absl::StrAppend(&text, "---:|");
  return text + "\n";
}

std::vector<std::string> Labels(const CompareOptions& options) {
  std::vector<std::string> labels;
  for (const CompareConfig& config : options.configs) labels.push_back(config.label);
  return labels;
}

// A table of one row per ReportRow and one column per config, `cell` writing each cell.
std::string Table(const CompareOptions& options,
                  const std::function<std::string(const ReportRow&, const std::string&)>& cell) {
  const std::vector<std::string> labels = Labels(options);
  std::string text = HeaderLines(labels);
  for (const ReportRow& row : ReportRows(options.workloads)) {
    absl::StrAppend(&text, "| ", RowTitle(row), " |");
    for (const std::string& label : labels) absl::StrAppend(&text, " ", cell(row, label), " |");
    text += "\n";
  }
  return text;
}

std::string MediansTable(const CompareOptions& options, const std::vector<Sample>& samples) {
  const std::optional<std::string> reference = ReferenceDaemon(options);
  const std::vector<std::string> labels = Labels(options);
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

std::vector<ReportRow> ReportRows(const std::vector<std::string>& workloads) {
  std::vector<ReportRow> rows;
  for (const std::string& workload : workloads) {
    for (const std::string& metric : WorkloadMetricNames(workload))
      rows.push_back({workload, metric});
    rows.push_back({workload, kCpuMetric});
  }
  rows.push_back({kDaemonWorkload, kRssMetric});
  rows.push_back({kDaemonWorkload, kCleanStopMetric});
  return rows;
}

std::string RowTitle(const ReportRow& row) {
  static const auto* workloads =
      new std::map<std::string, std::string>{{"stat", "stat storm, 2 threads"},
                                             {"create", "create+unlink, 2 threads"},
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
                                             {kRssMetric, "peak RSS MiB"},
                                             {kCleanStopMetric, "stopped cleanly"}};
  return absl::StrCat(workloads->at(row.workload), ", ", metrics->at(row.metric));
}

Cell Summarize(const std::vector<Sample>& samples, const std::string& config,
               const ReportRow& row) {
  std::vector<double> values;
  std::string error, other_note;
  for (const Sample& sample : samples) {
    if (sample.config != config || sample.workload != row.workload || sample.metric != row.metric) {
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
  std::string text = "round,config,workload,metric,value\n";
  for (const Sample& sample : samples) {
    const std::string value = sample.value ? absl::StrFormat("%.6g", *sample.value) : sample.note;
    absl::StrAppend(&text, sample.round, ",", CsvField(sample.config), ",", sample.workload, ",",
                    sample.metric, ",", CsvField(value), "\n");
  }
  return text;
}

std::string MarkdownReport(const CompareOptions& options, const std::vector<Sample>& samples,
                           const std::string& command_line) {
  const std::optional<std::string> reference = ReferenceDaemon(options);
  std::string text = absl::StrFormat(
      "# ringfuse-bench compare\n\n`%s`\n\n%d round(s), %s per workload, %d small files, "
      "%d MiB big file. Medians over rounds; in parentheses the ratio against native (n) and "
      "against %s (d). Lower is better for us, CPU and RSS rows. The floor serves only its one "
      "file: its stat storm stats that one file; its other workloads are n/a.\n\n",
      command_line, options.rounds, absl::FormatDuration(options.seconds), options.files,
      options.big_file_mib, reference ? Escape(*reference) : "(no daemon config)");
  absl::StrAppend(&text, MediansTable(options, samples));
  absl::StrAppend(&text, "\nSpread between rounds (max/min - 1):\n\n",
                  SpreadTable(options, samples));
  return text;
}

}  // namespace ringfuse::tools
