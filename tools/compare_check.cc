#include "tools/compare_check.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/compare_report.h"
#include "tools/compare_scaling.h"

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

// round, config, workload, threads, metric: the fields of results.csv before the value.
using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;

std::set<Key> NumericRows(const std::string& csv) {
  std::set<Key> rows;
  std::istringstream lines(csv);
  for (std::string line; std::getline(lines, line);) {
    const std::vector<std::string> fields = CsvFields(line);
    double value = 0;
    if (fields.size() == 6 && absl::SimpleAtod(fields[5], &value)) {
      rows.insert({fields[0], fields[1], fields[2], fields[3], fields[4]});
    }
  }
  return rows;
}

// The files that must be there and not empty.
std::vector<std::string> MissingFiles(const CompareOptions& options) {
  std::vector<std::string> missing;
  const bool scaled = !ScaledWorkloads(options).empty();
  std::vector<std::string> files = {"results.md", "chart.svg"};
  if (scaled) files.push_back("scaling.svg");
  for (const std::string& name : files) {
    if (ReadFile(options.output_dir + "/" + name).empty()) missing.push_back(name);
  }
  if (scaled &&
      ReadFile(options.output_dir + "/results.md").find("\n## Scaling\n") == std::string::npos) {
    missing.push_back("results.md's Scaling section");
  }
  return missing;
}

// Whether a ringfused config (`daemon`) or native must have a number in `row`.
bool Expected(const ReportRow& row, bool daemon, const std::vector<std::string>& uncountable) {
  if (!IsDaemonMetric(row.metric)) return true;
  const bool countable =
      std::find(uncountable.begin(), uncountable.end(), row.metric) == uncountable.end();
  return daemon && countable;
}

}  // namespace

absl::Status CheckOutput(const CompareOptions& options,
                         const std::vector<std::string>& uncountable) {
  std::vector<std::string> missing = MissingFiles(options);
  const std::set<Key> rows = NumericRows(ReadFile(options.output_dir + "/results.csv"));
  for (const CompareConfig& config : options.configs) {
    const bool daemon = config.kind == CompareConfig::Kind::kRingfused;
    if (!daemon && config.kind != CompareConfig::Kind::kNative) continue;
    for (int round = 1; round <= options.rounds; ++round) {
      for (const ReportRow& row : ReportRows(options.workloads, options.threads)) {
        if (!Expected(row, daemon, uncountable)) continue;
        const std::string threads = row.threads > 0 ? absl::StrCat(row.threads) : "";
        if (!rows.count({absl::StrCat(round), config.label, row.workload, threads, row.metric})) {
          missing.push_back(absl::StrCat("round ", round, " ", config.label, " ", row.workload,
                                         threads.empty() ? "" : " x" + threads, " ", row.metric));
        }
      }
    }
  }
  if (missing.empty()) return absl::OkStatus();
  return absl::DataLossError(
      absl::StrCat("--check: missing in ", options.output_dir, ": ", absl::StrJoin(missing, "; ")));
}

}  // namespace ringfuse::tools
