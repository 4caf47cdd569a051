#include "tools/conform/report.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "ringfuse/ringfuse.h"

namespace ringfuse::conform {

namespace {

using nlohmann::json;

std::vector<std::string> OfferedFlagNames(uint64_t flags) {
  std::vector<std::string> names;
  for (unsigned bit = 0; bit < 64; ++bit) {
    if (flags & (uint64_t{1} << bit)) names.push_back(InitFlagName(bit));
  }
  return names;
}

json ResultToJson(const Result& result) {
  json coverage = json::object();
  for (const auto& [action, opcodes] : result.coverage) coverage[action] = opcodes;
  return json{{"check", result.check},
              {"transport", result.transport},
              {"outcome", OutcomeName(result.outcome)},
              {"reason", result.reason},
              {"evidence", result.evidence},
              {"coverage", coverage},
              {"seconds", result.seconds}};
}

absl::StatusOr<Outcome> OutcomeFromName(const std::string& name) {
  for (Outcome outcome : {Outcome::kPass, Outcome::kFail, Outcome::kNotOffered}) {
    if (OutcomeName(outcome) == name) return outcome;
  }
  return absl::InvalidArgumentError(absl::StrFormat("unknown outcome \"%s\"", name));
}

// A markdown table cell: no line breaks, no column bars.
std::string Cell(const std::string& text) {
  return absl::StrReplaceAll(text, {{"|", "\\|"}, {"\n", " "}});
}

// The opcodes ringfuse types, by name, in wire order.
std::vector<std::string> TypedOpcodes() {
  std::vector<std::string> names;
#define RINGFUSE_NAME(name, number, ...) names.emplace_back(OpcodeName(number));
  RINGFUSE_FOR_EACH_OPCODE(RINGFUSE_NAME)
#undef RINGFUSE_NAME
  return names;
}

void AppendKernel(const Report& report, std::string& out) {
  const KernelOffer& kernel = report.kernel;
  absl::StrAppendFormat(&out, "# What Linux %s's FUSE does\n\n", kernel.release);
  absl::StrAppendFormat(&out,
                        "Written by `ringfuse-conform`. The kernel speaks protocol %d.%d; this "
                        "ringfuse types up to 7.%d. FUSE-over-io_uring switch: %s.\n\n",
                        kernel.major, kernel.minor, report.ringfuse_minor, kernel.enable_uring);
  if (kernel.minor > report.ringfuse_minor) {
    absl::StrAppendFormat(&out,
                          "The kernel's protocol is newer than ringfuse's: what 7.%d..7.%d added "
                          "is not typed here, and its INIT flags show as BITn.\n\n",
                          report.ringfuse_minor + 1, kernel.minor);
  }
  out += "## The INIT offer, flag by flag\n\n| bit | flag | offered |\n|--:|---|---|\n";
  for (unsigned bit = 0; bit < 64; ++bit) {
    const bool offered = kernel.init_flags & (uint64_t{1} << bit);
    const std::string name = InitFlagName(bit);
    if (!offered && name.starts_with("BIT")) continue;  // neither typed nor offered
    absl::StrAppendFormat(&out, "| %d | %s | %s |\n", bit, name, offered ? "yes" : "no");
  }
}

void AppendResults(const Report& report, std::string& out) {
  std::map<std::string, std::map<std::string, const Result*>> by_check;
  for (const Result& result : report.results) by_check[result.check][result.transport] = &result;
  out += "\n## Checks\n\n| check |";
  for (TransportKind kind : kTransports)
    out += absl::StrCat(" ", std::string(TransportName(kind)), " |");
  out += "\n|---|";
  for (size_t i = 0; i < std::size(kTransports); ++i) out += "---|";
  out += "\n";
  for (const auto& [check, transports] : by_check) {
    out += absl::StrCat("| ", check);
    for (TransportKind kind : kTransports) {
      const auto found = transports.find(std::string(TransportName(kind)));
      out += absl::StrCat(" | ", found == transports.end()
                                     ? std::string("-")
                                     : std::string(OutcomeName(found->second->outcome)));
    }
    out += " |\n";
  }
  std::string details;
  for (const Result& result : report.results) {
    if (result.outcome == Outcome::kPass) continue;
    absl::StrAppendFormat(&details, "- **%s** on %s, %s: %s\n", result.check, result.transport,
                          OutcomeName(result.outcome), result.reason);
    if (result.outcome != Outcome::kFail) continue;
    for (const std::string& line : result.evidence) {
      absl::StrAppendFormat(&details, "  - `%s`\n", line);
    }
  }
  if (!details.empty()) out += "\n### Not passed, and why\n\n" + details;
}

void AppendCoverage(const Report& report, std::string& out) {
  out += "\n## Coverage: the opcodes each client action produced, in order\n\n";
  out += "| action | transport | opcodes |\n|---|---|---|\n";
  for (const Result& result : report.results) {
    for (const auto& [action, opcodes] : result.coverage) {
      absl::StrAppendFormat(&out, "| %s | %s | %s |\n", Cell(action), result.transport,
                            opcodes.empty() ? "(none)" : absl::StrJoin(opcodes, " "));
    }
  }
  const std::set<std::string> seen(report.opcodes_seen.begin(), report.opcodes_seen.end());
  std::vector<std::string> never;
  for (const std::string& name : TypedOpcodes()) {
    if (!seen.contains(name)) never.push_back(name);
  }
  absl::StrAppendFormat(&out, "\nSent by the kernel during the run: %s.\n\n",
                        absl::StrJoin(report.opcodes_seen, ", "));
  absl::StrAppendFormat(&out, "Typed by ringfuse but never sent during the run: %s.\n",
                        never.empty() ? "none" : absl::StrJoin(never, ", "));
}

}  // namespace

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass: return "pass";
    case Outcome::kFail: return "fail";
    case Outcome::kNotOffered: return "not offered";
  }
  return "unknown";
}

std::string InitFlagName(unsigned bit) { return InitFlagNames(uint64_t{1} << bit); }

json ReportToJson(const Report& report) {
  const KernelOffer& kernel = report.kernel;
  json results = json::array();
  for (const Result& result : report.results) results.push_back(ResultToJson(result));
  return json{
      {"tool", "ringfuse-conform"},
      {"ringfuse_minor", report.ringfuse_minor},
      {"kernel",
       {{"release", kernel.release},
        {"major", kernel.major},
        {"minor", kernel.minor},
        {"init_flags", kernel.init_flags},
        {"init_offer", OfferedFlagNames(kernel.init_flags)},
        {"enable_uring", kernel.enable_uring}}},
      {"results", results},
      {"opcodes_seen", report.opcodes_seen},
  };
}

absl::StatusOr<Report> ReportFromJson(const json& in) {
  try {
    Report report;
    report.ringfuse_minor = in.at("ringfuse_minor").get<uint32_t>();
    const json& kernel = in.at("kernel");
    report.kernel.release = kernel.at("release").get<std::string>();
    report.kernel.major = kernel.at("major").get<uint32_t>();
    report.kernel.minor = kernel.at("minor").get<uint32_t>();
    report.kernel.init_flags = kernel.at("init_flags").get<uint64_t>();
    report.kernel.enable_uring = kernel.at("enable_uring").get<std::string>();
    for (const json& item : in.at("results")) {
      Result result;
      result.check = item.at("check").get<std::string>();
      result.transport = item.at("transport").get<std::string>();
      absl::StatusOr<Outcome> outcome = OutcomeFromName(item.at("outcome").get<std::string>());
      if (!outcome.ok()) return outcome.status();
      result.outcome = *outcome;
      result.reason = item.at("reason").get<std::string>();
      result.evidence = item.at("evidence").get<std::vector<std::string>>();
      for (const auto& [action, opcodes] : item.at("coverage").items()) {
        result.coverage[action] = opcodes.get<std::vector<std::string>>();
      }
      result.seconds = item.at("seconds").get<double>();
      report.results.push_back(std::move(result));
    }
    report.opcodes_seen = in.at("opcodes_seen").get<std::vector<std::string>>();
    return report;
  } catch (const json::exception& error) {
    return absl::InvalidArgumentError(
        absl::StrFormat("not a ringfuse-conform report: %s", error.what()));
  }
}

std::string ReportToMarkdown(const Report& report) {
  std::string out;
  AppendKernel(report, out);
  AppendResults(report, out);
  AppendCoverage(report, out);
  return out;
}

}  // namespace ringfuse::conform
