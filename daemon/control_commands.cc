#include "daemon/control_commands.h"

#include <unistd.h>

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ringfuse::daemon {
namespace {

bool IsWord(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return false;
  }
  return true;
}

std::string Error(std::string_view message) { return "error " + std::string(message); }

std::string AnswerPublish(const PublishRequest& request, Publisher& publisher) {
  absl::StatusOr<PublishReport> report = publisher.Publish(request.revision, request.method);
  if (!report.ok()) return Error(std::string(report.status().message()));
  const InvalidationReport& done = report->invalidation;
  return absl::StrFormat(
      "ok revision=%s method=%s switch_us=%.1f invalidate_us=%.1f entries=%u inodes=%u "
      "messages=%u not_cached=%u epoch_fallback=%d",
      report->revision, InvalidationMethodName(report->method),
      absl::ToDoubleMicroseconds(report->switch_time), absl::ToDoubleMicroseconds(done.elapsed),
      done.entries, done.inodes, done.messages, done.not_cached, done.epoch_fallback ? 1 : 0);
}

absl::StatusOr<ControlRequest> ParsePublish(std::string_view revision,
                                            std::string_view method_name) {
  if (!IsWord(revision)) return absl::InvalidArgumentError("revision names must be single words");
  const std::optional<InvalidationMethod> method = ParseInvalidationMethod(method_name);
  if (!method) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unknown invalidation \"%s\": epoch, entries, entries-batched or none",
        absl::CHexEscape(absl::string_view(method_name.data(), method_name.size()))));
  }
  return PublishRequest{std::string(revision), *method};
}

}  // namespace

absl::StatusOr<ControlRequest> ParseControlRequest(std::string_view request) {
  const std::vector<absl::string_view> words =
      absl::StrSplit(absl::string_view(request.data(), request.size()), ' ', absl::SkipEmpty());
  if (words.size() == 3 && words[0] == "publish") {
    return ParsePublish({words[1].data(), words[1].size()}, {words[2].data(), words[2].size()});
  }
  if (words.size() == 1 && words[0] == "status") return StatusRequest{};
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown request \"%s\": publish REV METHOD, or status",
                      absl::CHexEscape(absl::string_view(request.data(), request.size()))));
}

std::string AnswerControl(std::string_view request, Publisher& publisher, const InodeTable& table) {
  const absl::StatusOr<ControlRequest> parsed = ParseControlRequest(request);
  if (!parsed.ok()) return Error(std::string(parsed.status().message()));
  if (const auto* publish = std::get_if<PublishRequest>(&*parsed)) {
    return AnswerPublish(*publish, publisher);
  }
  return absl::StrFormat("ok revision=%s nodes=%u lookups=%u pid=%d", publisher.current(),
                         table.size(), table.lookups_served(), ::getpid());
}

absl::StatusOr<ControlFields> ParseControlReply(std::string_view reply) {
  absl::string_view line(reply.data(), reply.size());
  if (absl::ConsumePrefix(&line, "error ")) return absl::FailedPreconditionError(line);
  if (!absl::ConsumePrefix(&line, "ok")) {
    return absl::DataLossError(absl::StrCat("unexpected reply from ringfused: ", line));
  }
  ControlFields fields;
  for (absl::string_view field : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
    const size_t equals = field.find('=');
    if (equals == 0 || equals == absl::string_view::npos) {
      return absl::DataLossError(absl::StrCat("malformed field in ringfused's reply: ", field));
    }
    fields.emplace(field.substr(0, equals), field.substr(equals + 1));
  }
  return fields;
}

}  // namespace ringfuse::daemon
