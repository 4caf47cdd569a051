#include "tools/trace_format.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace ringfuse::tools {
namespace {

// Keeps the members in the writer's order: header first, then the opcode's fields.
using nlohmann::ordered_json;

std::string Shown(const ordered_json& value) {
  if (!value.is_string()) return value.dump();
  const std::string& text = value.get_ref<const std::string&>();
  return absl::StrCat("\"", absl::Utf8SafeCEscape(text), "\"");
}

}  // namespace

absl::StatusOr<std::string> FormatTraceLine(std::string_view line) {
  const ordered_json event = ordered_json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (event.is_discarded() || !event.is_object()) {
    return absl::InvalidArgumentError("not a JSON object");
  }
  const auto t = event.find("t");
  const auto ev = event.find("ev");
  if (t == event.end() || !t->is_number() || ev == event.end() || !ev->is_string()) {
    return absl::InvalidArgumentError("not a trace event (no \"t\" or \"ev\")");
  }
  std::string shown =
      absl::StrFormat("%.6f %-9s", t->get<double>() / 1e9, ev->get_ref<const std::string&>());
  for (const auto& [key, value] : event.items()) {
    if (key == "t" || key == "ev") continue;
    if (key == "unique") {
      absl::StrAppend(&shown, " #", value.dump());
    } else if (key == "op" && value.is_string()) {
      absl::StrAppend(&shown, " ", value.get_ref<const std::string&>());
    } else if (key == "latency_ns" && value.is_number()) {
      absl::StrAppendFormat(&shown, " latency=%.1fus", value.get<double>() / 1000);
    } else {
      absl::StrAppend(&shown, " ", key, "=", Shown(value));
    }
  }
  return shown;
}

}  // namespace ringfuse::tools
