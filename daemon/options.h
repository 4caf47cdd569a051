// ringfused's command line, parsed into what the daemon needs, with errors a user can act on.
//
//   ringfused SOURCE MOUNTPOINT [options]              passthrough of SOURCE, read-write
//   ringfused --revisions REPO MOUNTPOINT [options]    one revision of REPO, read-only
//
// Options follow the FUSE conventions: -o a,b=c,... (repeatable), -f, -d, -h/--help, plus
// --transport=auto|threads|uring|uring-cmd, --queue-depth=N, --threads=N and, with --revisions,
// --revision=NAME. Options and the two paths come in any order, so that mount(8) can start it
// through mount.fuse3 (`ringfused SOURCE MOUNTPOINT -o OPTIONS`), with mount(8)'s generic options
// (nosuid, noexec, noatime, _netdev, noauto...) among the -o ones. Revisions mode caches names,
// attributes and missing names for a day unless told otherwise, as revisioned deployments run: a
// publish invalidates, not a timeout.
// ringfuse-ctl restart starts its successor with --takeover-fd=N (daemon/handover/restart.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "ringfuse/mount_options.h"
#include "ringfuse/reply.h"
#include "ringfuse/transport_options.h"

namespace ringfuse::daemon {

enum class Mode { kPassthrough, kRevisions };

inline constexpr Timeout kRevisionsTimeout{86400, 0};

// The library's mount defaults, but for the source column (empty: SOURCE) and the subtype.
inline MountOptions DaemonMount() {
  MountOptions mount;
  mount.fsname.clear();
  mount.subtype = "ringfused";
  return mount;
}

struct DaemonOptions {
  Mode mode = Mode::kPassthrough;
  std::string source;  // SOURCE directory, or REPO of revision directories

  // What to mount and how: the mountpoint, and the -o options that are the mount's
  // (allow_other, default_permissions, ro, fsname, subtype, the generic flags, auto_unmount,
  // sync_init). An empty fsname shows SOURCE. Read-only in revisions mode, always.
  MountOptions mount = DaemonMount();

  // The -o options that are the daemon's.
  Timeout entry_timeout{1, 0};
  Timeout attr_timeout{1, 0};
  Timeout negative_timeout{0, 0};
  bool cache = true;  // cache=off: no page cache (direct I/O), zero timeouts
  bool writeback_cache = false;
  bool keep_cache = false;
  bool passthrough = false;  // kernel passthrough (FUSE_DEV_IOC_BACKING_OPEN)
  // Seconds after which the kernel aborts the connection if a request is still unanswered
  // (FUSE_REQUEST_TIMEOUT); 0: never.
  int request_timeout = 0;

  std::string revision;  // --revision: the revision served first; empty: the newest in REPO

  TransportKind transport = TransportKind::kAuto;
  TransportOptions transport_options;  // --queue-depth, --threads (workers)
  bool foreground = false;             // -f
  bool debug = false;                  // -d: every request and reply on one line; implies -f
  std::string trace;  // --trace=FILE: every request and reply as JSON lines in FILE
  bool help = false;  // -h, --help: print Usage() and exit 0
  // --takeover-fd=N: started by `ringfuse-ctl restart`, serve the mount the daemon at the other
  // end of unix socket N hands over instead of mounting; -1: mount.
  int takeover_fd = -1;
  // --keeper-fd=N: started by `ringfuse-ctl supervise`, whose keeper at the other end of unix
  // socket N holds the connection across a crash (ringfuse/keeper.h); -1: not kept.
  int keeper_fd = -1;
};

// How restart passes the socket, so that it can leave it out of its successor's own restart.
inline constexpr char kTakeoverFdOption[] = "--takeover-fd=";

// `args` excludes the program name.
absl::StatusOr<DaemonOptions> ParseDaemonArgs(std::span<const std::string_view> args);

std::string Usage(std::string_view program);

}  // namespace ringfuse::daemon
