// What ringfuse-bench compare writes: results.csv (every sample), and results.md, the medians
// over rounds with ratios against native and against the first daemon config, flags on results
// that beat native where FUSE cannot, the spread between rounds, and with two --threads counts
// or more the scaling tables (tools/compare_scaling.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/compare_run.h"

namespace ringfuse::tools {

// The rows of the tables, in order: each workload's metrics then its daemon's CPU, system calls
// and contention per operation, for each client thread count of stat and create; then the daemon's
// own rows.
struct ReportRow {
  std::string workload;
  std::string metric;
  int threads = 0;  // as in Sample
};
std::vector<ReportRow> ReportRows(const std::vector<std::string>& workloads,
                                  const std::vector<int>& threads);

// A row's title for people: "stat storm, 2 threads, ops/s".
std::string RowTitle(const ReportRow& row);

// Whether a metric is one of the daemon's, which native has none of (kDaemonPerOpMetrics and the
// daemon's own rows).
bool IsDaemonMetric(const std::string& metric);

// The configs' labels, the tables' columns in order.
std::vector<std::string> ConfigLabels(const CompareOptions& options);
// A markdown table's two header lines: `first_column`, then one right-aligned column per label.
std::string TableHeader(const std::string& first_column, const std::vector<std::string>& labels);

// Whether a metric is one of the daemon's futex calls or switches per operation.
bool IsContentionMetric(const std::string& metric);

// Three significant digits, with k and M: 62.8k, 1.35M, 188, 14.5, 0.25; two below 0.1: 0.0025.
std::string Number(double value);
// A markdown table cell's text with its pipes escaped.
std::string Escape(const std::string& text);

// The median of one config's row over rounds, or the note of a round without a value (an error
// hides the values of other rounds: a failure must show).
struct Cell {
  std::optional<double> median;
  std::optional<double> spread_percent;  // max/min - 1, with two rounds or more
  std::string note;
};
Cell Summarize(const std::vector<Sample>& samples, const std::string& config, const ReportRow& row);

// value / reference as "0.85x", or nothing if the reference has no median above 0.
std::optional<std::string> Ratio(double value, const Cell& reference);

// The first config that is not native: what the ratios are taken against. Nothing if none.
std::optional<std::string> ReferenceDaemon(const CompareOptions& options);

std::string CsvText(const std::vector<Sample>& samples);
std::string MarkdownReport(const CompareOptions& options, const std::vector<Sample>& samples,
                           const std::string& command_line);

}  // namespace ringfuse::tools
