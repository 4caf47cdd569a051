#include "tools/trace_summary.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "tools/percentile.h"

namespace ringfuse::tools {
namespace {

using nlohmann::json;

// A reply whose request fell out of the writer's table has no op: it is counted here.
constexpr std::string_view kUnpaired = "(unpaired)";

// The member `key` if it is a number of type T, else `otherwise`: a damaged line never throws.
template <typename T>
T NumberOr(const json& event, const char* key, T otherwise) {
  const json::const_iterator found = event.find(key);
  return found != event.end() && found->is_number() ? found->get<T>() : otherwise;
}

}  // namespace

void TraceSummary::Add(uint64_t number, std::string_view line) {
  if (line.empty()) return;
  const json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (event.is_discarded() || !event.is_object()) {
    problems_.push_back(absl::StrFormat("line %u: not a JSON object", number));
    return;
  }
  const json::const_iterator ev = event.find("ev");
  if (ev == event.end() || !ev->is_string()) {
    problems_.push_back(absl::StrFormat("line %u: no \"ev\"", number));
    return;
  }
  const std::string& kind = ev->get_ref<const std::string&>();
  const json::const_iterator op = event.find("op");
  const std::string name =
      op != event.end() && op->is_string() ? op->get<std::string>() : std::string(kUnpaired);
  if (kind == "request") {
    ++by_opcode_[name].requests;
  } else if (kind == "reply") {
    OpcodeTally& tally = by_opcode_[name];
    ++tally.replies;
    if (NumberOr<int64_t>(event, "error", 0) != 0) ++tally.errors;
    if (const double ns = NumberOr<double>(event, "latency_ns", -1); ns >= 0) {
      tally.latencies_us.push_back(ns / 1000);
    }
  } else if (kind == "malformed") {
    ++malformed_;
  } else if (kind == "dropped") {
    dropped_ += NumberOr<uint64_t>(event, "count", 0);
  } else {
    problems_.push_back(absl::StrFormat("line %u: unknown event \"%s\"", number, kind));
  }
}

std::string TraceSummary::Report() {
  std::vector<std::pair<std::string, OpcodeTally*>> rows;
  for (auto& [name, tally] : by_opcode_) rows.emplace_back(name, &tally);
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second->requests > b.second->requests;
  });
  std::string report = absl::StrFormat("%-16s %9s %9s %8s %10s %10s %10s %10s\n", "op", "requests",
                                       "replies", "errors", "p50_us", "p90_us", "p99_us", "max_us");
  for (auto& [name, tally] : rows) {
    std::vector<double>& us = tally->latencies_us;
    absl::StrAppendFormat(&report, "%-16s %9u %9u %8u", name, tally->requests, tally->replies,
                          tally->errors);
    if (us.empty()) {
      absl::StrAppendFormat(&report, " %10s %10s %10s %10s\n", "-", "-", "-", "-");
      continue;
    }
    const double p50 = Percentile(us, 0.5), p90 = Percentile(us, 0.9), p99 = Percentile(us, 0.99);
    absl::StrAppendFormat(&report, " %10.1f %10.1f %10.1f %10.1f\n", p50, p90, p99,
                          *std::max_element(us.begin(), us.end()));
  }
  absl::StrAppendFormat(&report, "malformed %u, dropped %u, lines skipped %u\n", malformed_,
                        dropped_, problems_.size());
  return report;
}

}  // namespace ringfuse::tools
