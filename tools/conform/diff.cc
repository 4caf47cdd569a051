#include "tools/conform/diff.h"

#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tools/conform/report.h"

namespace ringfuse::conform {

namespace {

void DiffKernels(const KernelOffer& a, const KernelOffer& b, std::vector<std::string>& out) {
  if (a.release != b.release) {
    out.push_back(absl::StrFormat("kernel: %s -> %s", a.release, b.release));
  }
  if (a.minor != b.minor) {
    out.push_back(absl::StrFormat("protocol: %d.%d -> %d.%d", a.major, a.minor, b.major, b.minor));
  }
  for (unsigned bit = 0; bit < 64; ++bit) {
    const uint64_t flag = uint64_t{1} << bit;
    if ((a.init_flags & flag) == (b.init_flags & flag)) continue;
    out.push_back(absl::StrFormat("INIT offer: %s %s", InitFlagName(bit),
                                  (b.init_flags & flag) ? "newly offered" : "no longer offered"));
  }
}

using ResultKey = std::pair<std::string, std::string>;  // check, transport

std::map<ResultKey, const Result*> ByKey(const Report& report) {
  std::map<ResultKey, const Result*> results;
  for (const Result& result : report.results) results[{result.check, result.transport}] = &result;
  return results;
}

// An action only one report has is said too: a check that failed early records less.
void DiffCoverage(const Result& a, const Result& b, std::vector<std::string>& out) {
  for (const auto& [action, opcodes] : b.coverage) {
    const auto before = a.coverage.find(action);
    if (before == a.coverage.end()) {
      out.push_back(absl::StrFormat("coverage %s on %s: only in B (%s)", action, b.transport,
                                    absl::StrJoin(opcodes, " ")));
    } else if (before->second != opcodes) {
      out.push_back(absl::StrFormat("coverage %s on %s: %s -> %s", action, b.transport,
                                    absl::StrJoin(before->second, " "),
                                    absl::StrJoin(opcodes, " ")));
    }
  }
  for (const auto& [action, opcodes] : a.coverage) {
    if (!b.coverage.contains(action)) {
      out.push_back(absl::StrFormat("coverage %s on %s: only in A (%s)", action, a.transport,
                                    absl::StrJoin(opcodes, " ")));
    }
  }
}

void DiffResults(const Report& a, const Report& b, std::vector<std::string>& out) {
  const std::map<ResultKey, const Result*> before = ByKey(a), after = ByKey(b);
  for (const auto& [key, result] : after) {
    const auto found = before.find(key);
    if (found == before.end()) {
      out.push_back(absl::StrFormat("%s on %s: only in B (%s)", key.first, key.second,
                                    OutcomeName(result->outcome)));
      continue;
    }
    if (found->second->outcome != result->outcome) {
      out.push_back(absl::StrFormat(
          "%s on %s: %s -> %s%s%s", key.first, key.second, OutcomeName(found->second->outcome),
          OutcomeName(result->outcome), result->reason.empty() ? "" : ": ", result->reason));
    }
    DiffCoverage(*found->second, *result, out);
  }
  for (const auto& [key, result] : before) {
    if (!after.contains(key)) {
      out.push_back(absl::StrFormat("%s on %s: only in A (%s)", key.first, key.second,
                                    OutcomeName(result->outcome)));
    }
  }
}

void DiffOpcodes(const Report& a, const Report& b, std::vector<std::string>& out) {
  const std::set<std::string> before(a.opcodes_seen.begin(), a.opcodes_seen.end());
  const std::set<std::string> after(b.opcodes_seen.begin(), b.opcodes_seen.end());
  for (const std::string& name : after) {
    if (!before.contains(name)) out.push_back(absl::StrFormat("opcode %s: newly sent", name));
  }
  for (const std::string& name : before) {
    if (!after.contains(name)) out.push_back(absl::StrFormat("opcode %s: no longer sent", name));
  }
}

}  // namespace

std::vector<std::string> DiffReports(const Report& before, const Report& after) {
  std::vector<std::string> out;
  DiffKernels(before.kernel, after.kernel, out);
  DiffResults(before, after, out);
  DiffOpcodes(before, after, out);
  return out;
}

}  // namespace ringfuse::conform
