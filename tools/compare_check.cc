#include "tools/compare_check.h"

#include <fstream>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/compare_report.h"

namespace ringfuse::tools {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

// The fields of one line of results.csv (quotes as CsvText writes them).
std::vector<std::string> CsvFields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

using Key = std::tuple<std::string, std::string, std::string, std::string>;  // round config ...

std::set<Key> NumericRows(const std::string& csv) {
  std::set<Key> rows;
  std::istringstream lines(csv);
  for (std::string line; std::getline(lines, line);) {
    const std::vector<std::string> fields = CsvFields(line);
    double value = 0;
    if (fields.size() == 5 && absl::SimpleAtod(fields[4], &value)) {
      rows.insert({fields[0], fields[1], fields[2], fields[3]});
    }
  }
  return rows;
}

}  // namespace

absl::Status CheckOutput(const CompareOptions& options) {
  std::vector<std::string> missing;
  for (const char* name : {"results.md", "chart.svg"}) {
    if (ReadFile(options.output_dir + "/" + name).empty()) missing.push_back(name);
  }
  const std::set<Key> rows = NumericRows(ReadFile(options.output_dir + "/results.csv"));
  for (const CompareConfig& config : options.configs) {
    const bool daemon = config.kind == CompareConfig::Kind::kRingfused;
    if (!daemon && config.kind != CompareConfig::Kind::kNative) continue;
    for (int round = 1; round <= options.rounds; ++round) {
      for (const ReportRow& row : ReportRows(options.workloads)) {
        const bool daemon_row = row.workload == kDaemonWorkload || row.metric == kCpuMetric;
        if (daemon_row && !daemon) continue;
        if (!rows.count({absl::StrCat(round), config.label, row.workload, row.metric})) {
          missing.push_back(
              absl::StrCat("round ", round, " ", config.label, " ", row.workload, " ", row.metric));
        }
      }
    }
  }
  if (missing.empty()) return absl::OkStatus();
  return absl::DataLossError(
      absl::StrCat("--check: missing in ", options.output_dir, ": ", absl::StrJoin(missing, "; ")));
}

}  // namespace ringfuse::tools
