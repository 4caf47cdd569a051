#include "tools/compare_configs.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "ringfuse/transport_options.h"

namespace ringfuse::tools {
namespace {

absl::Status Bad(const std::string& config, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("config ", config, ": ", why));
}

// The "k=v,k,..." after "name:", as ordered pairs (a bare key has an empty value).
std::vector<std::pair<std::string, std::string>> KeyValues(absl::string_view text) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::pair<std::string, std::string> pair = absl::StrSplit(item, absl::MaxSplits('=', 1));
    pairs.push_back(std::move(pair));
  }
  return pairs;
}

bool IsCount(const std::string& text) {
  int value = 0;
  return absl::SimpleAtoi(text, &value) && value > 0;
}

// One key of a ringfused config applied to its command line and its derived label.
absl::Status ApplyRingfusedKey(const std::string& key, const std::string& value,
                               CompareConfig& config, std::string& transport,
                               std::string& label_suffix) {
  if (key == "transport" && ParseTransportKind(value).ok()) {
    transport = value;
  } else if (key == "cache" && (value == "on" || value == "off")) {
    config.argv.insert(config.argv.end(), {"-o", "cache=" + value});
    if (value == "off") absl::StrAppend(&label_suffix, "/nocache");
  } else if (key == "passthrough" && value.empty()) {
    config.argv.insert(config.argv.end(), {"-o", "passthrough"});
    absl::StrAppend(&label_suffix, "/passthrough");
  } else if (key == "depth" && IsCount(value)) {
    config.argv.push_back("--queue-depth=" + value);
    absl::StrAppend(&label_suffix, "/depth", value);
  } else if (key == "threads" && IsCount(value)) {
    config.argv.push_back("--threads=" + value);
    absl::StrAppend(&label_suffix, "/threads", value);
  } else if (key == "o" && !value.empty()) {
    config.argv.insert(config.argv.end(), {"-o", value});
    absl::StrAppend(&label_suffix, "/", value);
  } else if (key == "trace" && !value.empty()) {
    config.argv.push_back("--trace=" + value);
    absl::StrAppend(&label_suffix, "/trace");
  } else if (key == "name" && !value.empty()) {
    config.label = value;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("bad key ", key, value.empty() ? "" : "=", value,
                     " (transport=auto|threads|uring|uring-cmd, cache=on|off, passthrough, "
                     "depth=N, threads=N, o=NAME[=VALUE], trace=FILE, name=LABEL)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<CompareConfig> Ringfused(const std::string& text, absl::string_view keys,
                                        const DaemonBinaries& binaries) {
  CompareConfig config{
      CompareConfig::Kind::kRingfused, "", {binaries.ringfused, "{src}", "{mnt}", "-f"}};
  std::string transport = "auto";
  std::string label_suffix;
  for (const auto& [key, value] : KeyValues(keys)) {
    if (absl::Status applied = ApplyRingfusedKey(key, value, config, transport, label_suffix);
        !applied.ok()) {
      return Bad(text, std::string(applied.message()));
    }
  }
  config.argv.push_back("--transport=" + transport);
  config.needs_uring_switch = transport == "uring-cmd";
  if (config.label.empty()) config.label = absl::StrCat("ringfused/", transport, label_suffix);
  return config;
}

absl::StatusOr<CompareConfig> Floor(const std::string& text, absl::string_view keys,
                                    const DaemonBinaries& binaries) {
  std::string transport = "auto";
  for (const auto& [key, value] : KeyValues(keys)) {
    if (key != "transport" || !ParseTransportKind(value).ok()) {
      return Bad(text, "floor takes only transport=auto|threads|uring|uring-cmd");
    }
    transport = value;
  }
  return CompareConfig{CompareConfig::Kind::kFloor,
                       "floor/" + transport,
                       {binaries.self, "compare-serve-null", transport, "{mnt}"},
                       transport == "uring-cmd"};
}

absl::StatusOr<CompareConfig> Command(const std::string& text, absl::string_view spec) {
  std::pair<std::string, std::string> label_and_template =
      absl::StrSplit(spec, absl::MaxSplits('=', 1));
  CompareConfig config{CompareConfig::Kind::kCommand, label_and_template.first,
                       absl::StrSplit(label_and_template.second, ' ', absl::SkipEmpty())};
  if (config.label.empty() || config.argv.empty()) {
    return Bad(text, "cmd: needs LABEL=COMMAND LINE with {src} and {mnt}");
  }
  // Another daemon may use FUSE-over-io_uring: the switch only allows it, it forces nothing.
  config.needs_uring_switch = true;
  return config;
}

}  // namespace

absl::StatusOr<CompareConfig> ParseCompareConfig(const std::string& text,
                                                 const DaemonBinaries& binaries) {
  std::pair<absl::string_view, absl::string_view> kind_and_rest =
      absl::StrSplit(text, absl::MaxSplits(':', 1));
  const absl::string_view kind = kind_and_rest.first;
  if (kind == "native" && kind_and_rest.second.empty()) {
    return CompareConfig{CompareConfig::Kind::kNative, "native", {}, false};
  }
  if (kind == "ringfused") return Ringfused(text, kind_and_rest.second, binaries);
  if (kind == "floor") return Floor(text, kind_and_rest.second, binaries);
  if (kind == "cmd") return Command(text, kind_and_rest.second);
  return Bad(text, "not native, ringfused[:k=v,...], floor[:transport=...] or cmd:LABEL=TEMPLATE");
}

std::vector<std::string> Substitute(const std::vector<std::string>& argv, const std::string& src,
                                    const std::string& mnt) {
  std::vector<std::string> result;
  for (const std::string& arg : argv) {
    result.push_back(absl::StrReplaceAll(arg, {{"{src}", src}, {"{mnt}", mnt}}));
  }
  return result;
}

}  // namespace ringfuse::tools
