// libFuzzer target over what ringfused reads from people rather than from the kernel.
//
// Input: one mode byte, then text. Modes: a command line (arguments split at NUL bytes) for
// ringfused's parser; a control-socket reply line for ringfuse-ctl's parser; a control-socket
// request line for ringfused's parser. Whatever the bytes, nothing may crash or read out of
// bounds, a command line the parser accepts names both paths, a publish request the parser
// accepts names a single-word revision, and a refused request says why in one printable line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "absl/strings/str_split.h"
#include "daemon/control/control_commands.h"
#include "daemon/options.h"

namespace ringfuse::daemon {
namespace {

void FuzzCommandLine(std::string_view text) {
  std::vector<std::string_view> args;
  for (absl::string_view arg : absl::StrSplit(absl::string_view(text.data(), text.size()), '\0')) {
    args.emplace_back(arg.data(), arg.size());
  }
  const absl::StatusOr<DaemonOptions> options = ParseDaemonArgs(args);
  if (options.ok() && !options->help &&
      (options->source.empty() || options->mount.mountpoint.empty())) {
    std::abort();
  }
  if (!options.ok() && options.status().message().empty()) std::abort();  // a user must see why
}

void FuzzControlReply(std::string_view text) {
  const absl::StatusOr<ControlFields> fields = ParseControlReply(text);
  if (fields.ok()) {
    for (const auto& [name, value] : *fields) {
      if (name.empty()) std::abort();
    }
  }
}

bool IsPrintableLine(std::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < ' ' || c == 0x7f) return false;
  }
  return !text.empty();
}

void FuzzControlRequest(std::string_view text) {
  const absl::StatusOr<ControlRequest> request = ParseControlRequest(text);
  if (!request.ok()) {
    const absl::string_view message = request.status().message();
    if (!IsPrintableLine({message.data(), message.size()})) std::abort();
    return;
  }
  const auto* publish = std::get_if<PublishRequest>(&*request);
  if (!publish) return;
  if (!IsPrintableLine(publish->revision) || publish->revision.find(' ') != std::string::npos) {
    std::abort();
  }
}

}  // namespace
}  // namespace ringfuse::daemon

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // A private, exactly-sized copy so that any overread is caught by ASan.
  std::vector<char> copy(data + 1, data + size);
  const std::string_view text(copy.data(), copy.size());
  switch (data[0] % 3) {
    case 0: ringfuse::daemon::FuzzCommandLine(text); break;
    case 1: ringfuse::daemon::FuzzControlReply(text); break;
    case 2: ringfuse::daemon::FuzzControlRequest(text); break;
  }
  return 0;
}
