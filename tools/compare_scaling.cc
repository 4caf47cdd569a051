#include "tools/compare_scaling.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/compare_report.h"
#include "tools/compare_workloads.h"

namespace ringfuse::tools {
namespace {

constexpr const char* kScaledMetric = "ops_per_s";

std::string ScalingCell(const Cell& cell, const Cell& reference, const Cell& fewest,
                        bool is_reference, bool is_fewest) {
  if (!cell.median) return Escape(cell.note);
  std::vector<std::string> ratios;
  const std::optional<std::string> to_reference = Ratio(*cell.median, reference);
  if (!is_reference && to_reference) ratios.push_back(*to_reference + " d");
  const std::optional<std::string> to_fewest = Ratio(*cell.median, fewest);
  if (!is_fewest && to_fewest) ratios.push_back(*to_fewest + " s");
  std::string text = Number(*cell.median);
  if (!ratios.empty()) absl::StrAppend(&text, " (", absl::StrJoin(ratios, ", "), ")");
  return text;
}

std::string ScalingTable(const CompareOptions& options, const std::vector<Sample>& samples,
                         const std::string& workload) {
  const std::optional<std::string> reference = ReferenceDaemon(options);
  const int fewest = options.threads.front();
  std::string text =
      absl::StrCat("\n### ", RowTitle({workload, kScaledMetric}), " by client threads\n\n",
                   TableHeader("threads", ConfigLabels(options)));
  for (const int threads : options.threads) {
    const ReportRow row{workload, kScaledMetric, threads};
    const Cell reference_cell = reference ? Summarize(samples, *reference, row) : Cell{};
    absl::StrAppend(&text, "| ", threads, " |");
    for (const std::string& label : ConfigLabels(options)) {
      const Cell fewest_cell = Summarize(samples, label, {workload, kScaledMetric, fewest});
      absl::StrAppend(&text, " ",
                      ScalingCell(Summarize(samples, label, row), reference_cell, fewest_cell,
                                  reference && label == *reference, threads == fewest),
                      " |");
    }
    text += "\n";
  }
  return text;
}

}  // namespace

std::vector<std::string> ScaledWorkloads(const CompareOptions& options) {
  std::vector<std::string> scaled;
  for (const std::string& workload : options.workloads) {
    if (ThreadCounts(workload, options.threads).size() > 1) scaled.push_back(workload);
  }
  return scaled;
}

std::string ScalingSection(const CompareOptions& options, const std::vector<Sample>& samples) {
  const std::vector<std::string> scaled = ScaledWorkloads(options);
  if (scaled.empty()) return "";
  const std::optional<std::string> reference = ReferenceDaemon(options);
  std::string text = absl::StrCat(
      "\n## Scaling\n\nMedian ops/s at each client thread count; in parentheses the ratio "
      "against ",
      reference ? Escape(*reference) : "(no daemon config)",
      " at the same count (d) and against the same config at ", options.threads.front(),
      options.threads.front() == 1 ? " thread" : " threads",
      " (s: its own scaling). The daemon's futex calls and switches per operation at each count "
      "are in the table above.\n");
  for (const std::string& workload : scaled) {
    absl::StrAppend(&text, ScalingTable(options, samples, workload));
  }
  return text;
}

}  // namespace ringfuse::tools
