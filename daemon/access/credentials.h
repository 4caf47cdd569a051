// Acting as the caller: the credentials a request's changes are made with on the backing tree.
//
// The daemon runs as root. An operation that creates or changes something runs with the
// caller's fsuid, fsgid and supplementary groups set on the calling worker thread only, so the
// backing filesystem itself makes every check (ownership, sticky and setgid directories, chown
// and chmod rules) exactly as it would for the caller, and new files belong to the caller.
//
// The fsuid alone is not enough: leaving 0 drops only the filesystem capabilities (CAP_CHOWN,
// CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID, ...) from the effective set, and root's others
// (CAP_SYS_RESOURCE to use reserved blocks and pass quotas, CAP_SYS_ADMIN for trusted.* xattrs,
// ...) would still act for the caller. So for the operation the thread's effective set is
// emptied too, the permitted set kept so that it can be raised again after (capset on this
// thread). Every switch is read back and the operation refused (EPERM) where one did not take.
//
// Raw syscalls only: glibc's setgroups() and setfsuid() wrappers are process-wide (they signal
// every thread to follow), which would hand one caller's identity to every request in flight.
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "base/errno.h"
#include "ringfuse/handler.h"

namespace ringfuse::daemon {

struct ProcessIds {
  uint32_t fsuid = 0;
  uint32_t fsgid = 0;
  std::vector<gid_t> groups;
};

// Parses the Uid:, Gid: and Groups: lines of /proc/<pid>/status.
std::optional<ProcessIds> ParseProcStatus(std::string_view status);

// Whether a /proc/self/status shows that /proc counts pids in the reader's own pid namespace:
// its NSpid: line, the reader's pid from /proc's namespace down to its own, holds one number.
// (Where /proc belongs to an unrelated namespace, /proc/self does not even resolve.)
bool CountsInOwnPidNamespace(std::string_view self_status);

// Whether /proc names the tasks that requests' pids name. The request's pid is the caller
// thread's id in the connection's pid namespace: that of the mount's maker, the daemon
// (ringfused mounts, or starts fusermount3). /proc names tasks in the namespace it was mounted
// for; where that is another, its numbers name other tasks. Read once.
bool ProcNamesRequestPids();

// The caller's supplementary groups, as a union of two sources, each of the calling thread:
//
// - The kernel's own, FUSE_EXT_GROUPS: with FUSE_CREATE_SUPP_GROUP it sends one group, with
//   creates (CREATE, TMPFILE, MKNOD, MKDIR, SYMLINK) only: the parent directory's, where the caller
//   is in it and it is not the caller's fsgid, checked against the caller's credentials of the
//   moment. Enough for the parent's mode and a setgid parent, not for a group named in an ACL.
// - /proc/<pid>/status. The request's pid is the calling thread's id (task_pid, not its thread
//   group's) in the connection's pid namespace, and /proc/<tid>/status is that thread's own: a
//   thread that set its groups alone (a raw setgroups) is served with its own, not its leader's.
//   While the daemon holds a request the caller waits for the answer, and once a request is read
//   even SIGKILL only waits it out (fs/fuse/dev.c request_wait_answer): the thread can neither
//   change its credentials nor exit and have its id reused, so the groups read are those it made
//   the request with. Kept only where the status's fsuid and fsgid are the request's.
//
// What remains:
// - A caller outside the connection's pid namespace arrives with pid 0; a daemon whose /proc
//   counts pids in another namespace than its own does not read it (CountsInOwnPidNamespace):
//   the extension's group only, an incomplete set.
// - /proc shows a thread's own (objective) credentials, the request its acting (subjective) ones:
//   a caller acting with others gets an incomplete set where their fsuid or fsgid differ from
//   its own, else its own groups, not those it acts with. So an io_uring personality, overlayfs
//   over the mount, and io_uring's async workers (iou-wrk threads, whose own credentials are those
//   of the thread that started them, act with the submitter's at submission).
// - A background request (asynchronous direct I/O) may outlive its thread; its id reused by a
//   task of the same fsuid and fsgid before the daemon reads would lend that task's groups. No
//   kernel fact tells the tasks apart (the header carries no start time); reusing an id takes
//   the pid space wrapping around while the request is in flight.
//
// Nothing is cached: a thread may change its groups between two requests without any sign the
// daemon could see, and serving a group it dropped would be more rights than it has.
//
// Where /proc was not read (or not kept) the set is incomplete, and fewer groups are not always
// fewer rights: ActAsCaller then refuses what a group could deny (group_denial.h).
struct CallerGroupSet {
  std::vector<gid_t> groups;
  bool complete = false;  // /proc's: every group the caller acts with
};
CallerGroupSet CallerGroups(const RequestContext& context);

// CAP_FSETID, for a caller the kernel says has it: a WRITE without FUSE_WRITE_KILL_SUIDGID, a
// truncate without FATTR_KILL_SUIDGID, an O_TRUNC open without FUSE_OPEN_KILL_SUIDGID. With it
// the backing filesystem keeps set-user-ID and set-group-ID as it would for that caller.
inline constexpr uint64_t kCapabilityFsetid = uint64_t{1} << 4;

// CAP_SYS_ADMIN, which FUSE_DEV_IOC_BACKING_OPEN asks of the thread registering a backing file.
inline constexpr uint64_t kCapabilitySysAdmin = uint64_t{1} << 21;

// Who a file belongs to: whom the daemon acts as where the kernel does not say who acts.
struct FileOwner {
  uint32_t uid = 0;
  uint32_t gid = 0;
};
// The owner of what `fd` is open on, or fstat's error.
base::ErrnoOr<FileOwner> OwnerOf(int fd);

// For an operation that creates nothing: the thread's umask is left as it is.
inline constexpr std::optional<mode_t> kCreatesNothing;

// A thread's capability sets, as capget and capset hold them (bit n is capability n).
struct Capabilities {
  uint64_t effective = 0;
  uint64_t permitted = 0;
  uint64_t inheritable = 0;
};
std::optional<Capabilities> ThreadCapabilities();
bool SetThreadCapabilities(const Capabilities& capabilities);

// Whether the daemon can act as its callers: that takes CAP_SETUID and CAP_SETGID (root has
// them). A daemon without them, a user's own mounted through fusermount3, makes every operation
// as that user, as every unprivileged FUSE daemon does: ActAsCaller then changes only the umask.
// Read once, at the first call.
bool CanActAsCallers();

// While alive, this thread acts as the request's caller (where CanActAsCallers()). Root callers
// keep the daemon's capabilities; only their fsgid changes, so that what they create gets their
// group.
//
// Or as a file's owner, for what the kernel sends with no caller: its writeback of cached pages
// (a shared writable mapping in every mode, every write under writeback_cache) arrives as uid 0,
// gid 0, pid 0 (fs/fuse/file.c sends it with args.nocreds), and a passthrough registration's
// credentials are those every later read and write of that file through the kernel is made with
// (fs/fuse/backing.c keeps the registering thread's). Acting as root there would let any writer
// use root's reserved blocks (ext4's resuid is fsuid 0) and pass quotas (CAP_SYS_RESOURCE); as
// the owner, with no groups and only `keep`, a writer gets no more than the owner has, and the
// blocks are charged to the owner as they are anyway. What remains: the kernel does not name
// the writer of a page, so a writer other than the owner is treated as the owner (a root-owned
// file's writer reaches root's reserved blocks; another user's file's writer is held to that
// user's limits, not its own).
class ActAsCaller {
 public:
  // `umask` applies to what the operation creates (kCreatesNothing: it creates nothing); the
  // thread gets its own umask for it.
  // `keep`: the capabilities (of kCapabilityFsetid) that stay effective for a non-root caller.
  // `decided_on`: the inodes whose permissions the operation's backing call checks (O_PATH fds
  // or open ones; -1 for none), where a group missing from an incomplete set could deny: then
  // the switch is refused with EACCES (group_denial.h).
  explicit ActAsCaller(const RequestContext& context, std::optional<mode_t> umask = kCreatesNothing,
                       uint64_t keep = 0, std::initializer_list<int> decided_on = {});
  // As `owner` (root too), with no supplementary groups and only the capabilities of `keep`.
  ActAsCaller(const FileOwner& owner, uint64_t keep);
  ~ActAsCaller();
  ActAsCaller(const ActAsCaller&) = delete;
  ActAsCaller& operator=(const ActAsCaller&) = delete;

  // False when an identity switch did not take: the caller's fsuid or fsgid, shedding the
  // daemon's supplementary groups (setgroups refused even an empty list), or emptying the
  // effective capabilities. The thread may then have rights the caller lacks, and the
  // operation must fail instead of being made, with error(): EPERM, or EACCES where a group
  // the daemon does not know of could deny the caller.
  bool ok() const { return ok_; }
  base::Errno error() const { return error_; }

 private:
  void SwitchIds(uint32_t uid, uint32_t gid, const std::vector<gid_t>& groups, uint64_t keep);
  bool DropCapabilities(uint64_t keep);

  bool ok_ = true;
  base::Errno error_{EPERM};
  bool own_umask_ = false;  // false where unshare(CLONE_FS) failed: the process umask applies
  mode_t old_umask_ = 0;
  bool switched_ids_ = false;
  bool switched_groups_ = false;
  uint32_t old_fsuid_ = 0;
  uint32_t old_fsgid_ = 0;
  std::optional<Capabilities> old_capabilities_;  // set where the effective set was emptied
};

// Returns `call()` made as the caller, or ActAsCaller's error(), without calling, where the thread
// cannot act as the caller without more rights than the caller's. `call` returns a base::Errno
// or a base::ErrnoOr: it reads errno itself, before the thread takes its own identity back.
template <typename Call>
auto CallAsCaller(const RequestContext& context, std::optional<mode_t> umask, Call&& call,
                  uint64_t keep = 0, std::initializer_list<int> decided_on = {})
    -> decltype(call()) {
  ActAsCaller caller(context, umask, keep, decided_on);
  if (!caller.ok()) return caller.error();
  return call();
}

// Returns `call()` made as the owner of what `fd` is open on (ActAsCaller's second form), or,
// without calling, the error where the owner is unknown or cannot be acted as.
template <typename Call>
auto CallAsOwnerOf(int fd, Call&& call, uint64_t keep) -> decltype(call()) {
  const base::ErrnoOr<FileOwner> owner = OwnerOf(fd);
  if (!owner.ok()) return owner.error();
  ActAsCaller as_owner(*owner, keep);
  if (!as_owner.ok()) return base::Errno(EPERM);
  return call();
}

// This thread's own supplementary groups, as the kernel holds them (for tests and restores).
std::vector<gid_t> ThreadGroups();

}  // namespace ringfuse::daemon
