// The report of a run, as JSON (for machines, and for `ringfuse-conform diff`) and as markdown (for
// a person: the kernel, its INIT offer flag by flag, every check on every transport, the coverage
// map, and which opcodes the kernel sent and which it never did).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tools/conform/result.h"

namespace ringfuse::conform {

nlohmann::json ReportToJson(const Report& report);
// An error says what in the JSON is missing or of the wrong type.
absl::StatusOr<Report> ReportFromJson(const nlohmann::json& json);
std::string ReportToMarkdown(const Report& report);

// Each INIT flag bit, by name ("ASYNC_READ", ..., "BIT63" for bits ringfuse does not name).
std::string InitFlagName(unsigned bit);

}  // namespace ringfuse::conform
