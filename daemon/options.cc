#include "daemon/options.h"

#include <getopt.h>

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

struct FlagOption {
  std::string_view name;
  void (*apply)(DaemonOptions&);
};

// Every -o option without a value. mount(8) and mount.fuse3 pass on the generic ones, from the
// command line or an fstab line.
constexpr FlagOption kFlagOptions[] = {
    {"allow_other", [](DaemonOptions& o) { o.mount.allow_other = true; }},
    {"default_permissions", [](DaemonOptions& o) { o.mount.default_permissions = true; }},
    {"writeback_cache", [](DaemonOptions& o) { o.writeback_cache = true; }},
    {"keep_cache", [](DaemonOptions& o) { o.keep_cache = true; }},
    {"passthrough", [](DaemonOptions& o) { o.passthrough = true; }},
    {"auto_unmount", [](DaemonOptions& o) { o.mount.auto_unmount = true; }},
    {"sync_init", [](DaemonOptions& o) { o.mount.sync_init = true; }},
    {"ro", [](DaemonOptions& o) { o.mount.read_only = true; }},
    {"rw", [](DaemonOptions& o) { o.mount.read_only = false; }},
    {"suid", [](DaemonOptions& o) { o.mount.flags.nosuid = false; }},
    {"nosuid", [](DaemonOptions& o) { o.mount.flags.nosuid = true; }},
    {"dev", [](DaemonOptions& o) { o.mount.flags.nodev = false; }},
    {"nodev", [](DaemonOptions& o) { o.mount.flags.nodev = true; }},
    {"exec", [](DaemonOptions& o) { o.mount.flags.noexec = false; }},
    {"noexec", [](DaemonOptions& o) { o.mount.flags.noexec = true; }},
    // atime and nostrictatime undo noatime and strictatime: back to the kernel's relatime.
    {"atime", [](DaemonOptions& o) { o.mount.flags.atime = AtimeUpdate::kRelative; }},
    {"relatime", [](DaemonOptions& o) { o.mount.flags.atime = AtimeUpdate::kRelative; }},
    {"nostrictatime", [](DaemonOptions& o) { o.mount.flags.atime = AtimeUpdate::kRelative; }},
    {"noatime", [](DaemonOptions& o) { o.mount.flags.atime = AtimeUpdate::kNever; }},
    {"strictatime", [](DaemonOptions& o) { o.mount.flags.atime = AtimeUpdate::kEvery; }},
    {"norelatime", [](DaemonOptions& o) { o.mount.flags.atime = AtimeUpdate::kEvery; }},
    {"diratime", [](DaemonOptions& o) { o.mount.flags.nodiratime = false; }},
    {"nodiratime", [](DaemonOptions& o) { o.mount.flags.nodiratime = true; }},
    {"lazytime", [](DaemonOptions& o) { o.mount.flags.lazytime = true; }},
    {"nolazytime", [](DaemonOptions& o) { o.mount.flags.lazytime = false; }},
    // mount(8)'s own, about when and by whom to mount: nothing for the filesystem to do.
    {"defaults", [](DaemonOptions&) {}},
    {"auto", [](DaemonOptions&) {}},
    {"noauto", [](DaemonOptions&) {}},
    {"_netdev", [](DaemonOptions&) {}},
    {"nofail", [](DaemonOptions&) {}},
    {"user", [](DaemonOptions&) {}},
    {"nouser", [](DaemonOptions&) {}},
    {"users", [](DaemonOptions&) {}},
    {"owner", [](DaemonOptions&) {}},
    {"group", [](DaemonOptions&) {}},
};

// x-* and comment=*: fstab notes for other programs (systemd, udisks), which mount.fuse3 passes
// on.
bool IsOthersNote(std::string_view name) { return name.substr(0, 2) == "x-" || name == "comment"; }

absl::Status ApplyFlagOption(std::string_view name, DaemonOptions& options) {
  for (const FlagOption& option : kFlagOptions) {
    if (option.name != name) continue;
    option.apply(options);
    return absl::OkStatus();
  }
  if (IsOthersNote(name)) return absl::OkStatus();
  return Bad(absl::StrFormat("unknown option -o %s", name));
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
  if (name == "fsname" || name == "subtype") {
    if (value.empty()) return Bad(absl::StrFormat("-o %s needs a name", name));
    (name == "fsname" ? options.mount.fsname : options.mount.subtype) = std::string(value);
    return absl::OkStatus();
  }
  if (IsOthersNote(name)) return absl::OkStatus();
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

// getopt_long's codes for the long options without a short one.
enum LongOption : int {
  kRevisions = 256,
  kRevision,
  kTransport,
  kQueueDepth,
  kThreads,
  kTrace,
  kTakeoverFd,
  kKeeperFd,
};

constexpr option kLongOptions[] = {
    {"help", no_argument, nullptr, 'h'},
    {"revisions", no_argument, nullptr, kRevisions},
    {"revision", required_argument, nullptr, kRevision},
    {"transport", required_argument, nullptr, kTransport},
    {"queue-depth", required_argument, nullptr, kQueueDepth},
    {"threads", required_argument, nullptr, kThreads},
    {"trace", required_argument, nullptr, kTrace},
    {"takeover-fd", required_argument, nullptr, kTakeoverFd},
    {"keeper-fd", required_argument, nullptr, kKeeperFd},
    {nullptr, 0, nullptr, 0},
};

// '-': every positional comes back in its place as code 1, so that options may follow them
// whatever POSIXLY_CORRECT says (mount.fuse3 puts them last). ':': a missing value is code ':'
// rather than '?'.
constexpr const char* kShortOptions = "-:hfdo:";
constexpr int kPositional = 1;

std::string_view LongName(int code) {
  for (const option& long_option : kLongOptions) {
    if (long_option.val == code) return long_option.name;
  }
  return "";
}

absl::Status ParseFd(std::string_view option, std::string_view value, int& fd) {
  if (!absl::SimpleAtoi(absl::string_view(value.data(), value.size()), &fd) || fd < 0) {
    return Bad(absl::StrFormat("%s needs a file descriptor number, not \"%s\"", option, value));
  }
  return absl::OkStatus();
}

// What getopt_long returned as `code` for one option, with `value` its argument if it takes one.
absl::Status ApplyOption(int code, std::string_view value, DaemonOptions& options) {
  switch (code) {
    case 'h': options.help = true; return absl::OkStatus();
    case 'f': options.foreground = true; return absl::OkStatus();
    case 'd': options.debug = options.foreground = true; return absl::OkStatus();
    case 'o': return ApplyMountOptions(value, options);
    case kRevisions: options.mode = Mode::kRevisions; return absl::OkStatus();
    case kRevision: options.revision = std::string(value); return absl::OkStatus();
    case kTrace:
      if (value.empty()) return Bad("--trace needs a file name");
      options.trace = std::string(value);
      return absl::OkStatus();
    case kTakeoverFd: return ParseFd("--takeover-fd", value, options.takeover_fd);
    case kKeeperFd:
      options.foreground = true;  // the keeper waits for this very process
      return ParseFd("--keeper-fd", value, options.keeper_fd);
    case kTransport: {
      absl::StatusOr<TransportKind> kind = ParseTransportKind(value);
      if (!kind.ok()) return kind.status();
      options.transport = *kind;
      return absl::OkStatus();
    }
    case kQueueDepth:
    case kThreads: {
      const bool queue_depth = code == kQueueDepth;
      absl::StatusOr<int> count =
          ParseCount(absl::StrFormat("--%s", LongName(code)), value, queue_depth ? 4096 : 1024);
      if (!count.ok()) return count.status();
      (queue_depth ? options.transport_options.queue_depth : options.transport_options.workers) =
          *count;
      return absl::OkStatus();
    }
    default: return absl::InternalError(absl::StrFormat("option code %d has no handler", code));
  }
}

// getopt_long's complaint (`code` '?' or ':') about `arg`, in our words. `option_code` is
// getopt's optopt: the short option refused, or the long option's code when its value is
// missing or unwanted, or 0 for an unknown long option.
absl::Status RefusedOption(int code, int option_code, std::string_view arg) {
  const std::string_view name = arg.substr(0, arg.find('='));
  if (code == ':') {
    if (option_code == 'o') return Bad("-o needs a list of options");
    return Bad(absl::StrFormat("%s needs a value", name));
  }
  if (option_code >= kRevisions) return Bad(absl::StrFormat("%s takes no value", name));
  if (option_code != 0) return Bad(absl::StrFormat("unknown option -%c", option_code));
  return Bad(absl::StrFormat("unknown option %s", arg));
}

// Options and positionals in any order; returns the positionals in their order.
absl::StatusOr<std::vector<std::string>> ParseOptions(std::span<const std::string_view> args,
                                                      DaemonOptions& options) {
  std::vector<std::string> storage = {"ringfused"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int argc = static_cast<int>(storage.size());
  std::vector<std::string> positionals;
  opterr = 0;
  optind = 0;  // glibc: start over, whatever a previous parse left
  for (;;) {
    const int code = getopt_long(argc, argv.data(), kShortOptions, kLongOptions, nullptr);
    if (code == -1) break;
    if (code == '?' || code == ':') return RefusedOption(code, optopt, argv[optind - 1]);
    if (code == kPositional) {
      positionals.emplace_back(optarg);
      continue;
    }
    const std::string_view value = optarg == nullptr ? "" : optarg;
    if (absl::Status status = ApplyOption(code, value, options); !status.ok()) return status;
  }
  positionals.insert(positionals.end(), argv.begin() + optind, argv.end() - 1);  // after "--"
  return positionals;
}

absl::Status CheckPositionals(const std::vector<std::string>& positionals, DaemonOptions& options) {
  const size_t wanted = 2;
  if (positionals.size() != wanted) {
    return Bad(options.mode == Mode::kRevisions
                   ? "expected --revisions REPO MOUNTPOINT"
                   : "expected SOURCE MOUNTPOINT (or --revisions REPO MOUNTPOINT)");
  }
  const std::string_view first = options.mode == Mode::kRevisions ? "REPO" : "SOURCE";
  for (auto [value, name] :
       {std::pair{std::string_view(positionals[0]), first},
        std::pair{std::string_view(positionals[1]), std::string_view("MOUNTPOINT")}}) {
    if (value.empty()) return Bad(absl::StrFormat("%s is an empty path", name));
  }
  if (positionals[1].starts_with("/dev/fd/")) {
    // mount.fuse3's drop_privileges mounts itself and hands over /dev/fuse as this path.
    return Bad(
        "a MOUNTPOINT of /dev/fd/N (mount.fuse3's drop_privileges) is not supported: mount "
        "without drop_privileges");
  }
  options.source = std::string(positionals[0]);
  options.mount.mountpoint = std::string(positionals[1]);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DaemonOptions> ParseDaemonArgs(std::span<const std::string_view> args) {
  DaemonOptions options;
  // Mode defaults first, so that -o anywhere on the line overrides them.
  if (std::find(args.begin(), args.end(), "--revisions") != args.end()) {
    options.entry_timeout = options.attr_timeout = options.negative_timeout = kRevisionsTimeout;
  }
  absl::StatusOr<std::vector<std::string>> positionals = ParseOptions(args, options);
  if (!positionals.ok()) return positionals.status();
  if (options.help) return options;
  if (absl::Status status = CheckPositionals(*positionals, options); !status.ok()) return status;
  if (options.passthrough && options.writeback_cache) {
    // The kernel refuses FOPEN_PASSTHROUGH on a connection with a writeback cache.
    return Bad(
        "-o passthrough and -o writeback_cache cannot be combined: the kernel serves "
        "passthrough files without its page cache");
  }
  if (options.mount.sync_init && options.mount.auto_unmount) {
    return Bad(
        "-o sync_init and -o auto_unmount cannot be combined: auto_unmount mounts through "
        "fusermount3, which mounts before the daemon could answer INIT");
  }
  if (options.mode == Mode::kRevisions) {
    // A node id's content never changes there, so its pages may outlive every open.
    options.mount.read_only = options.keep_cache = true;
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
      "  -o auto_unmount        unmount when the daemon dies, even killed (through fusermount3)\n"
      "  -o sync_init           answer INIT before mount() returns, so that a failed INIT fails\n"
      "                         the mount (Linux 6.18+, as root)\n"
      "  -o fsname=NAME         the source shown in /proc/mounts (default: SOURCE)\n"
      "  -o subtype=NAME        the type shown as fuse.NAME (default: ringfused)\n"
      "  -o nosuid,nodev,noexec,noatime,... mount(8)'s generic flags (suid, dev, exec, atime,\n"
      "                         relatime, strictatime, nodiratime, lazytime and their no-\n"
      "                         forms; nosuid,nodev unless given); defaults, auto, noauto,\n"
      "                         _netdev, nofail, user, users, x-* and comment= are mount(8)'s\n"
      "                         and ignored\n"
      "  --revision=NAME        with --revisions: serve NAME first (default: the newest)\n"
      "  --transport=KIND       auto (default), threads, uring or uring-cmd\n"
      "  --queue-depth=N        entries per io_uring queue\n"
      "  --threads=N            worker threads (threads and uring transports)\n"
      "  -f                     stay in the foreground\n"
      "  -d                     log every request and reply on one line (implies -f)\n"
      "  --trace=FILE           write every request and reply to FILE as JSON lines\n"
      "                         (read them with ringfuse-trace)\n"
      "  --takeover-fd=N        serve the mount handed over on unix socket N instead of\n"
      "                         mounting (used by ringfuse-ctl restart; not for other use)\n"
      "  --keeper-fd=N          a kept daemon, whose keeper on unix socket N holds the mount\n"
      "                         across a crash and starts it again (used by ringfuse-ctl\n"
      "                         supervise; implies -f)\n"
      "  -h, --help             this text\n",
      program);
}

}  // namespace ringfuse::daemon
