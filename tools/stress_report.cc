#include "tools/stress_report.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "tools/percentile.h"

namespace ringfuse::tools {
namespace {

// The median over `samples` of `of`, or nothing when a sample has no value.
std::optional<double> MedianOf(
    const std::vector<const StressSample*>& samples,
    const std::function<std::optional<double>(const StressSample&)>& of) {
  std::vector<double> values;
  for (const StressSample* sample : samples) {
    const std::optional<double> value = of(*sample);
    if (!value) return std::nullopt;
    values.push_back(*value);
  }
  if (values.empty()) return std::nullopt;
  return Percentile(values, 0.5);
}

// A contention count per request of `sample`.
std::function<std::optional<double>(const StressSample&)> PerOp(
    uint64_t (*count)(const ContentionCounts&)) {
  return [count](const StressSample& sample) -> std::optional<double> {
    if (!sample.contention || sample.requests == 0) return std::nullopt;
    return static_cast<double>(count(*sample.contention)) / static_cast<double>(sample.requests);
  };
}

StressRow RowOf(int threads, const std::vector<const StressSample*>& samples) {
  StressRow row;
  row.threads = threads;
  row.ops_per_second = MedianOf(samples, [](const StressSample& sample) {
                         return sample.seconds > 0 ? sample.requests / sample.seconds : 0.0;
                       }).value_or(0);
  row.futex_waits_per_op =
      MedianOf(samples, PerOp([](const ContentionCounts& counts) { return counts.futex_waits; }));
  row.futex_wakes_per_op =
      MedianOf(samples, PerOp([](const ContentionCounts& counts) { return counts.futex_wakes; }));
  row.switches_per_op = MedianOf(
      samples, PerOp([](const ContentionCounts& counts) { return counts.voluntary_switches; }));
  return row;
}

// "1 thread", "2 threads".
std::string CountOf(int count, absl::string_view thing) {
  return absl::StrCat(count, " ", thing, count == 1 ? "" : "s");
}

std::string Cell(const std::optional<double>& value) {
  return value ? absl::StrFormat("%.4f", *value) : "n/a";
}

nlohmann::json JsonOf(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

int SmallestThreadCount(const StressOptions& options) {
  return *std::min_element(options.threads.begin(), options.threads.end());
}

}  // namespace

std::vector<StressRow> SummarizeStress(const StressResults& results) {
  std::vector<StressRow> rows;
  for (const int threads : results.options.threads) {
    std::vector<const StressSample*> samples;
    for (const StressSample& sample : results.samples) {
      if (sample.threads == threads) samples.push_back(&sample);
    }
    rows.push_back(RowOf(threads, samples));
  }
  const int base = SmallestThreadCount(results.options);
  for (const StressRow& base_row : rows) {
    if (base_row.threads != base || base_row.ops_per_second <= 0) continue;
    for (StressRow& row : rows) row.speedup = row.ops_per_second / base_row.ops_per_second;
  }
  return rows;
}

std::string StressMarkdown(const StressResults& results) {
  const StressOptions& options = results.options;
  std::string text = absl::StrFormat(
      "## ringfuse-bench stress: PassthroughFs behind the dispatcher, in-process\n\n"
      "%d files, %d s per thread count, medians of %s. One op is one request handled; "
      "a loop is %d requests (LOOKUP d, LOOKUP file, GETATTR, OPEN, READ 4 KiB, RELEASE, "
      "FORGET x2).\n\n"
      "| threads | ops/s | vs %s | futex waits/op | futex wakes/op | "
      "voluntary switches/op |\n|---:|---:|---:|---:|---:|---:|\n",
      options.files, options.seconds, CountOf(options.rounds, "round"), results.requests_per_loop,
      CountOf(SmallestThreadCount(options), "thread"));
  for (const StressRow& row : SummarizeStress(results)) {
    absl::StrAppendFormat(&text, "| %d | %.0f | %.2f | %s | %s | %s |\n", row.threads,
                          row.ops_per_second, row.speedup, Cell(row.futex_waits_per_op),
                          Cell(row.futex_wakes_per_op), Cell(row.switches_per_op));
  }
  absl::StrAppendFormat(
      &text,
      "\nThis process may run on %s: ops/s cannot grow past %s. What shows a "
      "shared lock is futex calls per op rising with threads, and ops/s collapsing at %d "
      "threads.\n",
      CountOf(results.cpus, "CPU"), CountOf(results.cpus, "thread"),
      *std::max_element(options.threads.begin(), options.threads.end()));
  if (!results.meter_problem.empty()) {
    absl::StrAppend(&text, "\nFutex calls and switches: n/a (", results.meter_problem, ").\n");
  }
  return text;
}

std::string StressJson(const StressResults& results) {
  nlohmann::json rows = nlohmann::json::array();
  for (const StressRow& row : SummarizeStress(results)) {
    rows.push_back({{"threads", row.threads},
                    {"ops_per_second", row.ops_per_second},
                    {"speedup", row.speedup},
                    {"futex_waits_per_op", JsonOf(row.futex_waits_per_op)},
                    {"futex_wakes_per_op", JsonOf(row.futex_wakes_per_op)},
                    {"voluntary_switches_per_op", JsonOf(row.switches_per_op)}});
  }
  nlohmann::json samples = nlohmann::json::array();
  for (const StressSample& sample : results.samples) {
    nlohmann::json entry = {{"threads", sample.threads},
                            {"round", sample.round},
                            {"requests", sample.requests},
                            {"seconds", sample.seconds}};
    if (sample.contention) {
      entry["futex_waits"] = sample.contention->futex_waits;
      entry["futex_wakes"] = sample.contention->futex_wakes;
      entry["voluntary_switches"] = sample.contention->voluntary_switches;
    }
    samples.push_back(std::move(entry));
  }
  const StressOptions& options = results.options;
  const nlohmann::json json = {
      {"files", options.files},   {"seconds", options.seconds},
      {"rounds", options.rounds}, {"requests_per_loop", results.requests_per_loop},
      {"cpus", results.cpus},     {"meter_problem", results.meter_problem},
      {"rows", std::move(rows)},  {"samples", std::move(samples)}};
  return json.dump(2) + "\n";
}

}  // namespace ringfuse::tools
