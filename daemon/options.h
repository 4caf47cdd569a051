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
// ringfuse-ctl restart starts its successor with --takeover-fd=N (daemon/restart.h).
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

struct DaemonOptions {
  Mode mode = Mode::kPassthrough;
  std::string source;  // SOURCE directory, or REPO of revision directories
  std::string mountpoint;

  // -o options.
  Timeout entry_timeout{1, 0};
  Timeout attr_timeout{1, 0};
  Timeout negative_timeout{0, 0};
  bool cache = true;  // cache=off: no page cache (direct I/O), zero timeouts
  bool writeback_cache = false;
  bool keep_cache = false;
  bool allow_other = false;
  bool default_permissions = false;
  bool read_only = false;             // always true in revisions mode
  bool passthrough = false;           // kernel passthrough (FUSE_DEV_IOC_BACKING_OPEN)
  MountFlags mount_flags;             // nosuid, nodev, noexec, the atime family...
  std::string fsname;                 // the source column of /proc/mounts; empty: SOURCE
  std::string subtype = "ringfused";  // the type column shows fuse.<subtype>
  bool auto_unmount = false;          // fusermount3 unmounts once the daemon dies, even by SIGKILL
  bool sync_init = false;             // INIT is answered before mount() returns (Linux 6.18+)
  // Seconds after which the kernel aborts the connection if a request is still unanswered
  // (FUSE_REQUEST_TIMEOUT); 0: never.
  int request_timeout = 0;

  std::string revision;  // --revision: the revision served first; empty: the newest in REPO

  TransportKind transport = TransportKind::kAuto;
  int queue_depth = 0;      // 0: the transport's default
  int threads = 0;          // 0: one per online CPU
  bool foreground = false;  // -f
  bool debug = false;       // -d: every request and reply on one line; implies -f
  std::string trace;        // --trace=FILE: every request and reply as JSON lines in FILE
  bool help = false;        // -h, --help: print Usage() and exit 0
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
