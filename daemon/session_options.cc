#include "daemon/session_options.h"

namespace ringfuse::daemon {
namespace {

namespace flag = wire::init_flag;

// Flags asked for in every mode on top of the library's defaults. Locks are served by the
// backing files' own locks. DONT_MASK because the backing mkdirat/openat apply the umask the
// kernel sends with the request instead (set per worker thread, credentials.h), so that a
// directory's default ACL wins over the umask as on a local filesystem. CREATE_SUPP_GROUP:
// creates carry the parent's group when the caller is in it.
constexpr uint64_t kPassthroughFlags = flag::kPosixLocks | flag::kFlockLocks | flag::kDontMask |
                                       flag::kCreateSuppGroup | flag::kHandleKillprivV2 |
                                       flag::kAutoInvalData;

// A revisioned tree never changes under a node id, so symlink targets may stay cached.
constexpr uint64_t kRevisionFlags = flag::kCacheSymlinks;

// File handles through the mount (name_to_handle_at, NFS export) would need every node id to be
// resolvable after FORGET, which the daemon does not promise: without this flag the kernel hands
// out handles that open as ESTALE; with it, name_to_handle_at fails with EOPNOTSUPP at once.
// Both modes serve READDIRPLUS, which the library asks for only when told.
constexpr uint64_t kEveryModeFlags =
    flag::kNoExportSupport | flag::kDoReaddirplus | flag::kReaddirplusAuto;

}  // namespace

SessionOptions MakeSessionOptions(const DaemonOptions& options) {
  SessionOptions session;
  session.mount = options.mount;
  if (session.mount.fsname.empty()) session.mount.fsname = options.source;
  session.transport = options.transport;
  session.transport_options = options.transport_options;

  uint64_t& wishes = session.init.flags;
  wishes |= kEveryModeFlags;
  wishes |= options.mode == Mode::kRevisions ? kRevisionFlags : kPassthroughFlags;
  if (options.writeback_cache) wishes |= flag::kWritebackCache;
  if (options.request_timeout > 0) {
    wishes |= flag::kRequestTimeout;
    session.init.required_flags |= flag::kRequestTimeout;
    session.init.request_timeout = static_cast<uint16_t>(options.request_timeout);
  }
  if (options.passthrough) {
    wishes |= flag::kPassthrough;
    session.init.required_flags |= flag::kPassthrough;
  }
  return session;
}

}  // namespace ringfuse::daemon
