// What ringfuse-bench compare writes: results.csv (every sample), and results.md, the medians
// over rounds with ratios against native and against the first daemon config, flags on results
// that beat native where FUSE cannot, and the spread between rounds.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/compare_run.h"

namespace ringfuse::tools {

// The rows of the tables, in order: each workload's metrics, its daemon CPU, then the daemon's.
struct ReportRow {
  std::string workload;
  std::string metric;
};
std::vector<ReportRow> ReportRows(const std::vector<std::string>& workloads);

// A row's title for people: "stat storm, 2 threads, ops/s".
std::string RowTitle(const ReportRow& row);

// The median of one config's row over rounds, or the note of a round without a value (an error
// hides the values of other rounds: a failure must show).
struct Cell {
  std::optional<double> median;
  std::optional<double> spread_percent;  // max/min - 1, with two rounds or more
  std::string note;
};
Cell Summarize(const std::vector<Sample>& samples, const std::string& config, const ReportRow& row);

// The first config that is not native: what the ratios are taken against. Nothing if none.
std::optional<std::string> ReferenceDaemon(const CompareOptions& options);

std::string CsvText(const std::vector<Sample>& samples);
std::string MarkdownReport(const CompareOptions& options, const std::vector<Sample>& samples,
                           const std::string& command_line);

}  // namespace ringfuse::tools
