#include "daemon/control/control_commands.h"

#include <unistd.h>

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
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

std::string Escaped(std::string_view text) {
  return absl::CHexEscape(absl::string_view(text.data(), text.size()));
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

// The rest of the line after "restart": nothing, or an absolute path.
absl::StatusOr<ControlRequest> ParseRestart(std::string_view binary) {
  for (const char c : binary) {
    if (static_cast<unsigned char>(c) < ' ' || c == 0x7f) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "restart: the program's path \"%s\" holds a control character", Escaped(binary)));
    }
  }
  if (!binary.empty() && binary.front() != '/') {
    return absl::InvalidArgumentError(absl::StrFormat(
        "restart: the program's path must be absolute, not \"%s\"", Escaped(binary)));
  }
  return RestartRequest{std::string(binary)};
}

std::string AnswerRestart(const RestartRequest& request, const RestartFunction& restart) {
  absl::StatusOr<RestartReport> report = restart(request.binary);
  if (!report.ok()) return Error(std::string(report.status().message()));
  const HandoverReport& handover = report->handover;
  return absl::StrFormat("ok pid=%d pause_us=%.1f save_us=%.1f state_bytes=%u state_fds=%u",
                         report->pid, absl::ToDoubleMicroseconds(handover.pause),
                         absl::ToDoubleMicroseconds(handover.save), handover.state_bytes,
                         handover.state_fds);
}

std::string AnswerStatus(const Publisher* publisher, const InodeTable& table) {
  const std::string revision =
      publisher == nullptr ? "" : absl::StrCat("revision=", publisher->current(), " ");
  return absl::StrFormat("ok %snodes=%u lookups=%u pid=%d", revision, table.size(),
                         table.lookups_served(), ::getpid());
}

}  // namespace

absl::StatusOr<ControlRequest> ParseControlRequest(std::string_view request) {
  const std::vector<absl::string_view> words =
      absl::StrSplit(absl::string_view(request.data(), request.size()), ' ', absl::SkipEmpty());
  if (words.size() == 3 && words[0] == "publish") {
    return ParsePublish({words[1].data(), words[1].size()}, {words[2].data(), words[2].size()});
  }
  if (words.size() == 1 && words[0] == "status") return StatusRequest{};
  if (!words.empty() && words[0] == "restart") {
    // The words split off the request itself, so the rest of the line starts at the word's end.
    const size_t after = static_cast<size_t>(words[0].data() + words[0].size() - request.data());
    const size_t start = request.find_first_not_of(' ', after);
    return ParseRestart(start == std::string_view::npos ? "" : request.substr(start));
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown request \"%s\": publish REV METHOD, status, or restart [BINARY]",
                      absl::CHexEscape(absl::string_view(request.data(), request.size()))));
}

std::string AnswerControl(std::string_view request, Publisher* publisher, const InodeTable& table,
                          const RestartFunction& restart) {
  const absl::StatusOr<ControlRequest> parsed = ParseControlRequest(request);
  if (!parsed.ok()) return Error(std::string(parsed.status().message()));
  if (const auto* publish = std::get_if<PublishRequest>(&*parsed)) {
    if (publisher == nullptr) return Error("publish needs revisions mode");
    return AnswerPublish(*publish, *publisher);
  }
  if (const auto* restart_request = std::get_if<RestartRequest>(&*parsed)) {
    return AnswerRestart(*restart_request, restart);
  }
  return AnswerStatus(publisher, table);
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
