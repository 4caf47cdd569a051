#include "tools/handover_report.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "tools/percentile.h"

namespace ringfuse::tools {
namespace {

using Field = double HandoverSample::*;

struct Row {
  const char* label;
  Field field;
  double scale;  // times are kept in microseconds and shown in milliseconds
  int decimals;
};

constexpr Row kRows[] = {
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

std::string Cell(const HandoverResult& result, const Row& row) {
  if (result.samples.empty()) return "-";
  const MedianAndMax summary = Summarize(result.samples, row.field);
  return absl::StrFormat("%.*f / %.*f", row.decimals, summary.median * row.scale, row.decimals,
                         summary.max * row.scale);
}

int FailedCalls(const HandoverResult& result) {
  int failed = 0;
  for (const HandoverSample& sample : result.samples) failed += sample.failed_calls;
  return failed;
}

}  // namespace

MedianAndMax Summarize(const std::vector<HandoverSample>& samples, Field field) {
  std::vector<double> values;
  for (const HandoverSample& sample : samples) values.push_back(sample.*field);
  if (values.empty()) return {};
  const double max = *std::max_element(values.begin(), values.end());
  return {Percentile(values, 0.5), max};
}

std::string HandoverTable(const std::vector<HandoverResult>& results) {
  std::string table = "| cell: median / max over the runs |";
  std::string rule = "|---|";
  for (const HandoverResult& result : results) {
    absl::StrAppendFormat(&table, " %d inodes |", result.inodes);
    rule += "---|";
  }
  table += "\n" + rule + "\n| nodes in ringfused's table |";
  for (const HandoverResult& result : results) absl::StrAppendFormat(&table, " %d |", result.nodes);
  table += "\n| runs |";
  for (const HandoverResult& result : results) {
    absl::StrAppendFormat(&table, " %d |", result.samples.size());
  }
  for (const Row& row : kRows) {
    absl::StrAppendFormat(&table, "\n| %s |", row.label);
    for (const HandoverResult& result : results) {
      absl::StrAppendFormat(&table, " %s |", Cell(result, row));
    }
  }
  table += "\n| failed stat calls, all runs |";
  for (const HandoverResult& result : results) {
    absl::StrAppendFormat(&table, " %d |", FailedCalls(result));
  }
  return table + "\n";
}

}  // namespace ringfuse::tools
