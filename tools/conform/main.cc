// ringfuse-conform: runs the catalogue of conformance checks against the running kernel, each
// with real mounts, and reports what the kernel's FUSE does; `diff` compares two reports.
//
//   ringfuse-conform [--transport=all] [--only=GLOB,...] [--json=FILE] [--markdown=FILE]
//                    [--enable-uring]
//   ringfuse-conform --list
//   ringfuse-conform diff A.json B.json
//
// Exits 1 when a check fails (or a diff finds a difference), 2 on a usage or set-up error.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_split.h"
#include "tools/conform/check.h"
#include "tools/conform/context.h"
#include "tools/conform/diff.h"
#include "tools/conform/report.h"
#include "tools/conform/runner.h"
#include "tools/hyphenated_flags.h"

ABSL_FLAG(std::string, transport, "all", "threads, uring, uring-cmd, or all of them");
ABSL_FLAG(std::string, only, "", "run only the checks matching these globs (comma-separated)");
ABSL_FLAG(bool, list, false, "list the checks and what each shows, and exit");
ABSL_FLAG(std::string, json, "", "write the report as JSON to this file");
ABSL_FLAG(std::string, markdown, "", "write the report as markdown to this file");
ABSL_FLAG(bool, enable_uring, false,
          "switch FUSE-over-io_uring on for the run and back afterwards (root)");

namespace ringfuse::conform {
namespace {

constexpr int kFailed = 1;
constexpr int kUsage = 2;

int Usage(const std::string& message) {
  std::fprintf(stderr, "ringfuse-conform: %s\n", message.c_str());
  return kUsage;
}

absl::StatusOr<std::vector<TransportKind>> ParseTransports(const std::string& text) {
  if (text == "all")
    return std::vector<TransportKind>(std::begin(kTransports), std::end(kTransports));
  std::vector<TransportKind> kinds;
  for (absl::string_view word : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    absl::StatusOr<TransportKind> kind = ParseTransportKind(std::string(word));
    if (!kind.ok() || *kind == TransportKind::kAuto) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--transport: \"%s\" is none of threads, uring, uring-cmd, all", word));
    }
    kinds.push_back(*kind);
  }
  return kinds;
}

absl::StatusOr<Report> ReadReport(const std::string& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrFormat("cannot read %s", path));
  const nlohmann::json json = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s is not JSON", path));
  }
  absl::StatusOr<Report> report = ReportFromJson(json);
  if (!report.ok())
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s", path, report.status().message()));
  return report;
}

int Diff(const std::string& before_path, const std::string& after_path) {
  absl::StatusOr<Report> before = ReadReport(before_path);
  if (!before.ok()) return Usage(std::string(before.status().message()));
  absl::StatusOr<Report> after = ReadReport(after_path);
  if (!after.ok()) return Usage(std::string(after.status().message()));
  const std::vector<std::string> changes = DiffReports(*before, *after);
  for (const std::string& line : changes) std::printf("%s\n", line.c_str());
  if (changes.empty()) std::printf("no difference\n");
  return changes.empty() ? 0 : kFailed;
}

int List() {
  for (const Check& check : Catalogue()) {
    std::printf("%-48.*s %.*s\n", static_cast<int>(check.name.size()), check.name.data(),
                static_cast<int>(check.summary.size()), check.summary.data());
  }
  return 0;
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream file(path);
  file << text;
  return static_cast<bool>(file);
}

int Run() {
  absl::StatusOr<std::vector<TransportKind>> transports =
      ParseTransports(absl::GetFlag(FLAGS_transport));
  if (!transports.ok()) return Usage(std::string(transports.status().message()));
  std::vector<std::string> patterns =
      absl::StrSplit(absl::GetFlag(FLAGS_only), ',', absl::SkipEmpty());
  absl::StatusOr<std::vector<const Check*>> checks = SelectChecks(patterns);
  if (!checks.ok()) return Usage(std::string(checks.status().message()));
  absl::StatusOr<Report> report = RunCatalogue({.transports = *transports,
                                                .checks = *checks,
                                                .enable_uring = absl::GetFlag(FLAGS_enable_uring)});
  if (!report.ok()) return Usage(std::string(report.status().message()));
  const std::string json_path = absl::GetFlag(FLAGS_json);
  if (!json_path.empty() && !WriteFile(json_path, ReportToJson(*report).dump(2) + "\n")) {
    return Usage("cannot write " + json_path);
  }
  const std::string markdown_path = absl::GetFlag(FLAGS_markdown);
  if (!markdown_path.empty() && !WriteFile(markdown_path, ReportToMarkdown(*report))) {
    return Usage("cannot write " + markdown_path);
  }
  int passed = 0, failed = 0, not_offered = 0;
  for (const Result& result : report->results) {
    passed += result.outcome == Outcome::kPass;
    failed += result.outcome == Outcome::kFail;
    not_offered += result.outcome == Outcome::kNotOffered;
  }
  std::fprintf(stderr, "Linux %s, protocol %d.%d: %d passed, %d failed, %d not offered\n",
               report->kernel.release.c_str(), report->kernel.major, report->kernel.minor, passed,
               failed, not_offered);
  return failed == 0 ? 0 : kFailed;
}

}  // namespace
}  // namespace ringfuse::conform

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "runs FUSE conformance checks against the running kernel with real mounts.\n"
      "  ringfuse-conform [--transport=all] [--only=GLOB,...] [--json=FILE] [--markdown=FILE]\n"
      "                   [--enable-uring]\n"
      "  ringfuse-conform --list\n"
      "  ringfuse-conform diff A.json B.json   (what changed from A to B)");
  ringfuse::tools::AcceptHyphenatedFlags(argc, argv);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() >= 2 && std::string(args[1]) == "diff") {
    if (args.size() != 4) return ringfuse::conform::Usage("diff takes two reports: A.json B.json");
    return ringfuse::conform::Diff(args[2], args[3]);
  }
  if (args.size() != 1)
    return ringfuse::conform::Usage("unexpected argument: " + std::string(args[1]));
  if (absl::GetFlag(FLAGS_list)) return ringfuse::conform::List();
  return ringfuse::conform::Run();
}
