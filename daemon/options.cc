#include "daemon/options.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace ringfuse::daemon {
namespace {

absl::Status Bad(std::string_view what) {
  return absl::InvalidArgumentError(absl::StrFormat("%s (see --help)", what));
}

// "1", "0.5", "3600": seconds, as FUSE mount options give them.
absl::StatusOr<Timeout> ParseSeconds(std::string_view name, std::string_view text) {
  double seconds = 0;
  if (!absl::SimpleAtod(absl::string_view(text.data(), text.size()), &seconds) ||
      !std::isfinite(seconds) || seconds < 0 || seconds > 1e9) {
    return Bad(
        absl::StrFormat("-o %s needs a number of seconds from 0 to 1e9, not \"%s\"", name, text));
  }
  const uint64_t nanoseconds = static_cast<uint64_t>(std::llround(seconds * 1e9));
  return Timeout{nanoseconds / 1'000'000'000, static_cast<uint32_t>(nanoseconds % 1'000'000'000)};
}

absl::StatusOr<int> ParseCount(std::string_view name, std::string_view text, int max) {
  int value = 0;
  if (!absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &value) || value < 1 ||
      value > max) {
    return Bad(
        absl::StrFormat("%s needs a whole number from 1 to %d, not \"%s\"", name, max, text));
  }
  return value;
}

absl::Status ApplyFlagOption(std::string_view name, DaemonOptions& options) {
  if (name == "allow_other")
    options.allow_other = true;
  else if (name == "default_permissions")
    options.default_permissions = true;
  else if (name == "ro")
    options.read_only = true;
  else if (name == "rw")
    options.read_only = false;
  else if (name == "writeback_cache")
    options.writeback_cache = true;
  else if (name == "keep_cache")
    options.keep_cache = true;
  else if (name == "passthrough")
    options.passthrough = true;
  else
    return Bad(absl::StrFormat("unknown option -o %s", name));
  return absl::OkStatus();
}

absl::Status ApplyValueOption(std::string_view name, std::string_view value,
                              DaemonOptions& options) {
  if (name == "cache") {
    if (value != "on" && value != "off") return Bad("-o cache takes on or off");
    options.cache = value == "on";
    return absl::OkStatus();
  }
  if (name == "request_timeout") {
    absl::StatusOr<int> seconds = ParseCount("-o request_timeout", value, 65535);
    if (!seconds.ok()) return seconds.status();
    options.request_timeout = *seconds;
    return absl::OkStatus();
  }
  Timeout* timeout = name == "entry_timeout"      ? &options.entry_timeout
                     : name == "attr_timeout"     ? &options.attr_timeout
                     : name == "negative_timeout" ? &options.negative_timeout
                                                  : nullptr;
  if (timeout == nullptr) return Bad(absl::StrFormat("unknown option -o %s=%s", name, value));
  absl::StatusOr<Timeout> parsed = ParseSeconds(name, value);
  if (!parsed.ok()) return parsed.status();
  *timeout = *parsed;
  return absl::OkStatus();
}

// One -o argument: a comma-separated list of name or name=value.
absl::Status ApplyMountOptions(std::string_view list, DaemonOptions& options) {
  for (absl::string_view item :
       absl::StrSplit(absl::string_view(list.data(), list.size()), ',', absl::SkipEmpty())) {
    const size_t equals = item.find('=');
    const std::string_view name(item.data(),
                                equals == absl::string_view::npos ? item.size() : equals);
    absl::Status status =
        equals == absl::string_view::npos
            ? ApplyFlagOption(name, options)
            : ApplyValueOption(name,
                               std::string_view(item.data() + equals + 1, item.size() - equals - 1),
                               options);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// --name=value or --name value; returns the value and advances `i` past what it used.
absl::StatusOr<std::string_view> LongValue(std::span<const std::string_view> args, size_t& i,
                                           std::string_view name) {
  const std::string_view arg = args[i];
  if (arg.size() > name.size() && arg[name.size()] == '=') return arg.substr(name.size() + 1);
  if (i + 1 >= args.size()) return Bad(absl::StrFormat("%s needs a value", name));
  return args[++i];
}

bool IsLong(std::string_view arg, std::string_view name) {
  return arg == name || (arg.size() > name.size() && arg.substr(0, name.size()) == name &&
                         arg[name.size()] == '=');
}

absl::Status ApplyLongOption(std::span<const std::string_view> args, size_t& i,
                             DaemonOptions& options) {
  const std::string_view arg = args[i];
  if (IsLong(arg, "--revision")) {
    absl::StatusOr<std::string_view> value = LongValue(args, i, "--revision");
    if (!value.ok()) return value.status();
    options.revision = std::string(*value);
    return absl::OkStatus();
  }
  if (IsLong(arg, "--trace")) {
    absl::StatusOr<std::string_view> value = LongValue(args, i, "--trace");
    if (!value.ok()) return value.status();
    if (value->empty()) return Bad("--trace needs a file name");
    options.trace = std::string(*value);
    return absl::OkStatus();
  }
  if (IsLong(arg, "--transport")) {
    absl::StatusOr<std::string_view> value = LongValue(args, i, "--transport");
    if (!value.ok()) return value.status();
    absl::StatusOr<TransportKind> kind = ParseTransportKind(*value);
    if (!kind.ok()) return kind.status();
    options.transport = *kind;
    return absl::OkStatus();
  }
  for (auto [name, target, max] : {std::tuple{"--queue-depth", &options.queue_depth, 4096},
                                   std::tuple{"--threads", &options.threads, 1024}}) {
    if (!IsLong(arg, name)) continue;
    absl::StatusOr<std::string_view> value = LongValue(args, i, name);
    if (!value.ok()) return value.status();
    absl::StatusOr<int> count = ParseCount(name, *value, max);
    if (!count.ok()) return count.status();
    *target = *count;
    return absl::OkStatus();
  }
  return Bad(absl::StrFormat("unknown option %s", arg));
}

absl::Status CheckPositionals(const std::vector<std::string_view>& positionals,
                              DaemonOptions& options) {
  const size_t wanted = 2;
  if (positionals.size() != wanted) {
    return Bad(options.mode == Mode::kRevisions
                   ? "expected --revisions REPO MOUNTPOINT"
                   : "expected SOURCE MOUNTPOINT (or --revisions REPO MOUNTPOINT)");
  }
  const std::string_view first = options.mode == Mode::kRevisions ? "REPO" : "SOURCE";
  for (auto [value, name] : {std::pair{positionals[0], first},
                             std::pair{positionals[1], std::string_view("MOUNTPOINT")}}) {
    if (value.empty()) return Bad(absl::StrFormat("%s is an empty path", name));
  }
  options.source = std::string(positionals[0]);
  options.mountpoint = std::string(positionals[1]);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DaemonOptions> ParseDaemonArgs(std::span<const std::string_view> args) {
  DaemonOptions options;
  // Mode defaults first, so that -o anywhere on the line overrides them.
  if (std::find(args.begin(), args.end(), "--revisions") != args.end()) {
    options.entry_timeout = options.attr_timeout = options.negative_timeout = kRevisionsTimeout;
  }
  std::vector<std::string_view> positionals;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    absl::Status status;
    if (arg == "-h" || arg == "--help") {
      options.help = true;
    } else if (arg == "-f") {
      options.foreground = true;
    } else if (arg == "-d") {
      options.debug = options.foreground = true;
    } else if (arg == "--revisions") {
      options.mode = Mode::kRevisions;
    } else if (arg == "-o") {
      if (i + 1 >= args.size()) return Bad("-o needs a list of options");
      status = ApplyMountOptions(args[++i], options);
    } else if (arg.substr(0, 2) == "-o") {
      status = ApplyMountOptions(arg.substr(2), options);
    } else if (arg.substr(0, 2) == "--") {
      status = ApplyLongOption(args, i, options);
    } else if (arg.size() > 1 && arg[0] == '-') {
      return Bad(absl::StrFormat("unknown option %s", arg));
    } else {
      positionals.push_back(arg);
    }
    if (!status.ok()) return status;
  }
  if (options.help) return options;
  if (absl::Status status = CheckPositionals(positionals, options); !status.ok()) return status;
  if (options.passthrough && options.writeback_cache) {
    // The kernel refuses FOPEN_PASSTHROUGH on a connection with a writeback cache.
    return Bad(
        "-o passthrough and -o writeback_cache cannot be combined: the kernel serves "
        "passthrough files without its page cache");
  }
  if (options.mode == Mode::kRevisions) {
    // A node id's content never changes there, so its pages may outlive every open.
    options.read_only = options.keep_cache = true;
  }
  if (options.debug && !options.trace.empty()) return Bad("-d and --trace cannot be combined");
  if (!options.revision.empty() && options.mode != Mode::kRevisions) {
    return Bad("--revision is for --revisions mode");
  }
  if (!options.cache) {
    options.entry_timeout = options.attr_timeout = options.negative_timeout = Timeout{};
  }
  return options;
}

std::string Usage(std::string_view program) {
  return absl::StrFormat(
      "usage: %1$s SOURCE MOUNTPOINT [options]            serve SOURCE (read-write)\n"
      "       %1$s --revisions REPO MOUNTPOINT [options]  serve a revision of REPO (read-only)\n"
      "\n"
      "  -o entry_timeout=S     seconds the kernel caches names (default 1; revisions 86400)\n"
      "  -o attr_timeout=S      seconds the kernel caches attributes (default 1; revisions 86400)\n"
      "  -o negative_timeout=S  seconds the kernel caches missing names (default 0; revisions\n"
      "                         86400)\n"
      "  -o cache=on|off        off: no page cache, every timeout 0\n"
      "  -o writeback_cache     let the kernel buffer writes\n"
      "  -o keep_cache          keep cached pages across opens\n"
      "  -o allow_other         let other users in\n"
      "  -o default_permissions let the kernel check permissions\n"
      "  -o ro                  read-only\n"
      "  -o passthrough         reads and writes bypass the daemon (kernel passthrough)\n"
      "  -o request_timeout=S   the kernel aborts the connection when a request is unanswered\n"
      "                         for S seconds (blocking lock waits too); the daemon then exits 1\n"
      "  --revision=NAME        with --revisions: serve NAME first (default: the newest)\n"
      "  --transport=KIND       auto (default), threads, uring or uring-cmd\n"
      "  --queue-depth=N        entries per io_uring queue\n"
      "  --threads=N            worker threads (threads and uring transports)\n"
      "  -f                     stay in the foreground\n"
      "  -d                     log every request and reply on one line (implies -f)\n"
      "  --trace=FILE           write every request and reply to FILE as JSON lines\n"
      "                         (read them with ringfuse-trace)\n"
      "  -h, --help             this text\n",
      program);
}

}  // namespace ringfuse::daemon
