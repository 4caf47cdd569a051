#include "daemon/access/credentials.h"

#include <linux/capability.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "daemon/access/group_denial.h"

namespace ringfuse::daemon {
namespace {

// The fourth number of "Uid:\treal\teffective\tsaved\tfs" is the one file access uses.
bool ParseFsId(std::string_view numbers, uint32_t& id) {
  std::vector<absl::string_view> fields = absl::StrSplit(
      absl::string_view(numbers.data(), numbers.size()), absl::ByAnyChar(" \t"), absl::SkipEmpty());
  return fields.size() == 4 && absl::SimpleAtoi(fields[3], &id);
}

bool ParseGroups(std::string_view numbers, std::vector<gid_t>& groups) {
  for (absl::string_view field : absl::StrSplit(absl::string_view(numbers.data(), numbers.size()),
                                                absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
    gid_t gid;
    if (!absl::SimpleAtoi(field, &gid)) return false;
    groups.push_back(gid);
  }
  return true;
}

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return std::move(text).str();
}

// /proc/<tid>/status is that very thread's, not its thread group leader's: proc_pid_lookup finds
// any task by its id, so the credentials shown, groups included, are the thread's own.
std::optional<ProcessIds> ReadThreadStatus(uint32_t tid) {
  if (!ProcNamesRequestPids()) return std::nullopt;
  const std::optional<std::string> status = ReadFile("/proc/" + std::to_string(tid) + "/status");
  if (!status) return std::nullopt;
  return ParseProcStatus(*status);
}

long RawSetgroups(const std::vector<gid_t>& groups) {
  return ::syscall(SYS_setgroups, groups.size(), groups.data());
}

// setfsuid and setfsgid return the previous id and no error, so whether one took is read back:
// a second call with the same id changes nothing and returns the current one.
bool SetFsId(long call, uint32_t id, uint32_t& previous) {
  previous = static_cast<uint32_t>(::syscall(call, id));
  return static_cast<uint32_t>(::syscall(call, id)) == id;
}

// A thread that sets its umask must not share it with the other workers: unshare the
// filesystem attributes (root, cwd, umask) once per thread.
bool OwnUmask() {
  thread_local const bool unshared = ::unshare(CLONE_FS) == 0;
  return unshared;
}

// The thread's umask becomes `umask`; returns the one before. Set only when it differs: most
// callers' umask is the daemon's own, and a syscall to set it twice per request is not free.
mode_t SwapThreadUmask(mode_t umask) {
  thread_local mode_t current = [] {
    const mode_t now = ::umask(0);
    ::umask(now);
    return now;
  }();
  const mode_t old = current;
  if (umask != current) {
    ::umask(umask);
    current = umask;
  }
  return old;
}

const std::vector<gid_t>& DaemonGroups() {
  static const std::vector<gid_t> groups = ThreadGroups();
  return groups;
}

// Whether a group missing from the caller's incomplete set, `known` and its fsgid, could deny it
// on one of the inodes `decided_on`.
bool UnknownGroupCouldDeny(const RequestContext& context, std::vector<gid_t> known,
                           std::initializer_list<int> decided_on) {
  known.push_back(context.gid());
  return std::any_of(decided_on.begin(), decided_on.end(),
                     [&](int fd) { return fd >= 0 && AGroupCouldDeny(fd, context.uid(), known); });
}

}  // namespace

std::optional<ProcessIds> ParseProcStatus(std::string_view status) {
  ProcessIds ids;
  bool uid = false, gid = false, groups = false;
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(status.data(), status.size()), '\n', absl::SkipEmpty())) {
    const std::string_view view(line.data(), line.size());
    if (view.starts_with("Uid:")) uid = ParseFsId(view.substr(4), ids.fsuid);
    if (view.starts_with("Gid:")) gid = ParseFsId(view.substr(4), ids.fsgid);
    if (view.starts_with("Groups:")) groups = ParseGroups(view.substr(7), ids.groups);
  }
  if (!uid || !gid || !groups) return std::nullopt;
  return ids;
}

bool CountsInOwnPidNamespace(std::string_view self_status) {
  for (absl::string_view line : absl::StrSplit(
           absl::string_view(self_status.data(), self_status.size()), '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, "NSpid:")) continue;
    const std::vector<absl::string_view> pids =
        absl::StrSplit(line.substr(6), absl::ByAnyChar(" \t"), absl::SkipEmpty());
    return pids.size() == 1;
  }
  return false;
}

bool ProcNamesRequestPids() {
  static const bool same = [] {
    const std::optional<std::string> self = ReadFile("/proc/self/status");
    return self && CountsInOwnPidNamespace(*self);
  }();
  return same;
}

CallerGroupSet CallerGroups(const RequestContext& context) {
  CallerGroupSet set;
  if (context.pid() != 0) {
    std::optional<ProcessIds> ids = ReadThreadStatus(context.pid());
    if (ids && ids->fsuid == context.uid() && ids->fsgid == context.gid()) {
      set.groups = std::move(ids->groups);
      set.complete = true;
    }
  }
  const RecordArray<uint32_t>& extra = context.extensions.supp_groups;
  for (uint32_t i = 0; i < extra.size(); ++i) set.groups.push_back(extra[i]);
  std::sort(set.groups.begin(), set.groups.end());
  set.groups.erase(std::unique(set.groups.begin(), set.groups.end()), set.groups.end());
  return set;
}

std::vector<gid_t> ThreadGroups() {
  const int count = ::getgroups(0, nullptr);
  std::vector<gid_t> groups(count > 0 ? static_cast<size_t>(count) : 0);
  if (count > 0) groups.resize(static_cast<size_t>(std::max(0, ::getgroups(count, groups.data()))));
  return groups;
}

// Raw capget and capset with pid 0: this thread's sets only (libcap is not worth a dependency
// for two calls).
std::optional<Capabilities> ThreadCapabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return std::nullopt;
  const auto join = [](uint32_t low, uint32_t high) { return uint64_t{high} << 32 | low; };
  return Capabilities{join(data[0].effective, data[1].effective),
                      join(data[0].permitted, data[1].permitted),
                      join(data[0].inheritable, data[1].inheritable)};
}

bool SetThreadCapabilities(const Capabilities& capabilities) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  const auto low = [](uint64_t set) { return static_cast<uint32_t>(set); };
  const auto high = [](uint64_t set) { return static_cast<uint32_t>(set >> 32); };
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {
      {low(capabilities.effective), low(capabilities.permitted), low(capabilities.inheritable)},
      {high(capabilities.effective), high(capabilities.permitted), high(capabilities.inheritable)}};
  return ::syscall(SYS_capset, &header, data) == 0;
}

bool CanActAsCallers() {
  constexpr uint64_t kSetIds = uint64_t{1} << CAP_SETGID | uint64_t{1} << CAP_SETUID;
  static const bool can = [] {
    const std::optional<Capabilities> capabilities = ThreadCapabilities();
    return capabilities && (capabilities->permitted & kSetIds) == kSetIds;
  }();
  return can;
}

ActAsCaller::ActAsCaller(const RequestContext& context, std::optional<mode_t> umask, uint64_t keep,
                         std::initializer_list<int> decided_on) {
  DaemonGroups();  // taken once, before any thread ever changes its own
  own_umask_ = umask.has_value() && OwnUmask();
  if (own_umask_) old_umask_ = SwapThreadUmask(*umask);
  if ((context.uid() == 0 && context.gid() == 0) || !CanActAsCallers()) return;
  // Root reaches everything anyway: only the group of what it creates changes.
  if (context.uid() == 0) {
    switched_ids_ = true;
    ok_ = SetFsId(SYS_setfsgid, context.gid(), old_fsgid_);
    return;
  }
  const CallerGroupSet groups = CallerGroups(context);
  if (!groups.complete && UnknownGroupCouldDeny(context, groups.groups, decided_on)) {
    ok_ = false;
    error_ = base::Errno(EACCES);
    return;
  }
  switched_ids_ = true;
  SwitchIds(context.uid(), context.gid(), groups.groups, keep);
}

ActAsCaller::ActAsCaller(const FileOwner& owner, uint64_t keep) {
  DaemonGroups();
  if (!CanActAsCallers()) return;
  switched_ids_ = true;
  SwitchIds(owner.uid, owner.gid, {}, keep);
}

// The capabilities go last: setgroups and setfsuid need CAP_SETGID and CAP_SETUID.
void ActAsCaller::SwitchIds(uint32_t uid, uint32_t gid, const std::vector<gid_t>& groups,
                            uint64_t keep) {
  ok_ = SetFsId(SYS_setfsgid, gid, old_fsgid_);
  // Where the groups cannot be set (more than the kernel allows, say), none rather than the
  // daemon's: fewer rights than the caller's, never more.
  switched_groups_ = RawSetgroups(groups) == 0 || RawSetgroups(std::vector<gid_t>{}) == 0;
  ok_ = ok_ && switched_groups_;
  old_capabilities_ = ThreadCapabilities();  // before setfsuid drops the filesystem ones
  ok_ = SetFsId(SYS_setfsuid, uid, old_fsuid_) && ok_;
  ok_ = DropCapabilities(keep) && ok_;
}

bool ActAsCaller::DropCapabilities(uint64_t keep) {
  if (!old_capabilities_) return false;
  Capabilities dropped = *old_capabilities_;
  dropped.effective = dropped.permitted & keep;
  if (!SetThreadCapabilities(dropped)) return false;
  const std::optional<Capabilities> now = ThreadCapabilities();
  return now && now->effective == dropped.effective;
}

// The capabilities first, for the same reason. A worker that could not take the daemon's
// identity back would make the next root caller's changes as this caller (files root creates
// owned by them): the daemon stops instead. It cannot happen while the permitted set holds
// CAP_SETUID and CAP_SETGID, which nothing here gives up.
ActAsCaller::~ActAsCaller() {
  if (own_umask_) SwapThreadUmask(old_umask_);
  if (!switched_ids_) return;
  bool restored = !old_capabilities_ || SetThreadCapabilities(*old_capabilities_);
  uint32_t previous;
  restored = SetFsId(SYS_setfsuid, old_fsuid_, previous) && restored;
  restored = SetFsId(SYS_setfsgid, old_fsgid_, previous) && restored;
  if (switched_groups_) restored = RawSetgroups(DaemonGroups()) == 0 && restored;
  if (!restored) {
    std::fputs("ringfused: a worker could not take the daemon's identity back\n", stderr);
    std::abort();
  }
}

base::ErrnoOr<FileOwner> OwnerOf(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return base::Errno::Last();
  return FileOwner{st.st_uid, st.st_gid};
}

}  // namespace ringfuse::daemon
