#include "tools/handover_report.h"

#include "absl/strings/str_format.h"

namespace ringfuse::tools {
namespace {

template <typename Sample>
struct Row {
  const char* label;
  double Sample::*field;
  double scale;  // times are kept in microseconds and shown in milliseconds
  int decimals;
};

constexpr Row<HandoverSample> kHandoverRows[] = {
    {"client pause: longest stat call, ms", &HandoverSample::client_max_us, 1e-3, 2},
    {"longest stat the kernel answered from its cache, ms", &HandoverSample::cached_max_us, 1e-3,
     2},
    {"ringfused pause_us, ms", &HandoverSample::pause_us, 1e-3, 2},
    {"ringfused save_us (saving the inode table), ms", &HandoverSample::save_us, 1e-3, 2},
    {"restart round trip (the successor's start included), ms", &HandoverSample::round_trip_us,
     1e-3, 1},
    {"state bytes", &HandoverSample::state_bytes, 1, 0},
    {"state fds", &HandoverSample::state_fds, 1, 0},
    {"stat calls in the window", &HandoverSample::calls, 1, 0},
};

constexpr Row<CrashSample> kCrashRows[] = {
    {"client pause: longest stat call, ms", &CrashSample::client_max_us, 1e-3, 2},
    {"longest stat the kernel answered from its cache, ms", &CrashSample::cached_max_us, 1e-3, 2},
    {"kill to a daemon serving again, ms", &CrashSample::recovery_us, 1e-3, 2},
    {"first walk of the tree after it (a LOOKUP per name unless they stayed valid), ms",
     &CrashSample::first_walk_us, 1e-3, 1},
    {"the walk after that (the kernel's cache), ms", &CrashSample::cached_walk_us, 1e-3, 1},
    {"stat calls in the window", &CrashSample::calls, 1, 0},
};

template <typename Sample>
std::string Cell(const ReplacementResult<Sample>& result, const Row<Sample>& row) {
  if (result.samples.empty()) return "-";
  const MedianAndMax summary = Summarize(result.samples, row.field);
  return absl::StrFormat("%.*f / %.*f", row.decimals, summary.median * row.scale, row.decimals,
                         summary.max * row.scale);
}

template <typename Sample>
int FailedCalls(const ReplacementResult<Sample>& result) {
  int failed = 0;
  for (const Sample& sample : result.samples) failed += sample.failed_calls;
  return failed;
}

template <typename Sample, size_t kRowCount>
std::string Table(const std::vector<ReplacementResult<Sample>>& results,
                  const Row<Sample> (&rows)[kRowCount]) {
  std::string table = "| cell: median / max over the runs |";
  std::string rule = "|---|";
  for (const auto& result : results) {
    absl::StrAppendFormat(&table, " %d inodes |", result.inodes);
    rule += "---|";
  }
  table += "\n" + rule + "\n| nodes in ringfused's table |";
  for (const auto& result : results) absl::StrAppendFormat(&table, " %d |", result.nodes);
  table += "\n| runs |";
  for (const auto& result : results) absl::StrAppendFormat(&table, " %d |", result.samples.size());
  for (const Row<Sample>& row : rows) {
    absl::StrAppendFormat(&table, "\n| %s |", row.label);
    for (const auto& result : results) absl::StrAppendFormat(&table, " %s |", Cell(result, row));
  }
  table += "\n| failed stat calls, all runs |";
  for (const auto& result : results) absl::StrAppendFormat(&table, " %d |", FailedCalls(result));
  return table + "\n";
}

}  // namespace

std::string HandoverTable(const std::vector<HandoverResult>& results) {
  return Table(results, kHandoverRows);
}

std::string CrashTable(const std::vector<CrashResult>& results) {
  return Table(results, kCrashRows);
}

}  // namespace ringfuse::tools
