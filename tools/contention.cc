#include "tools/contention.h"

#include <dirent.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "transport/errno_status.h"

namespace ringfuse::tools {
namespace {

constexpr const char* kTracefs = "/sys/kernel/tracing";

// The op values of each kind, with and without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME.
std::string FilterOf(std::initializer_list<int> ops) {
  std::string filter;
  for (const int op : ops) {
    for (const int flags : {0, FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME,
                            FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME}) {
      absl::StrAppend(&filter, filter.empty() ? "" : " || ", "op == ", op | flags);
    }
  }
  return filter;
}

absl::StatusOr<uint64_t> FutexTracepointId() {
  const std::string path = absl::StrCat(kTracefs, "/events/syscalls/sys_enter_futex/id");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 &&
      ::mount("nodev", kTracefs, "tracefs", 0, nullptr) != 0 && errno != EBUSY) {
    return internal::ErrnoStatus(errno, absl::StrCat("mount tracefs on ", kTracefs));
  }
  std::ifstream file(path);
  uint64_t id = 0;
  if (!(file >> id)) return absl::UnavailableError(absl::StrCat("cannot read ", path));
  return id;
}

absl::StatusOr<internal::UniqueFd> OpenCounter(uint64_t tracepoint, pid_t tid,
                                               const std::string& filter) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.size = sizeof(attr);
  attr.config = tracepoint;
  internal::UniqueFd fd(static_cast<int>(
      ::syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC)));
  if (!fd.valid()) return internal::ErrnoStatus(errno, absl::StrCat("perf_event_open ", tid));
  if (::ioctl(fd.get(), PERF_EVENT_IOC_SET_FILTER, filter.c_str()) != 0) {
    return internal::ErrnoStatus(errno, "PERF_EVENT_IOC_SET_FILTER " + filter);
  }
  return fd;
}

std::vector<pid_t> ThreadsOf(pid_t pid) {
  std::vector<pid_t> tids;
  DIR* dir = ::opendir(absl::StrFormat("/proc/%d/task", pid).c_str());
  if (dir == nullptr) return tids;
  while (const dirent* entry = ::readdir(dir)) {
    pid_t tid = 0;
    if (absl::SimpleAtoi(entry->d_name, &tid)) tids.push_back(tid);
  }
  ::closedir(dir);
  return tids;
}

uint64_t ReadCount(const internal::UniqueFd& fd) {
  uint64_t count = 0;
  return ::read(fd.get(), &count, sizeof(count)) == sizeof(count) ? count : 0;
}

}  // namespace

absl::StatusOr<ContentionMeter> ContentionMeter::Start(pid_t pid) {
  absl::StatusOr<uint64_t> tracepoint = FutexTracepointId();
  if (!tracepoint.ok()) return tracepoint.status();
  const std::string waits = FilterOf({FUTEX_WAIT, FUTEX_WAIT_BITSET});
  const std::string wakes = FilterOf({FUTEX_WAKE, FUTEX_WAKE_BITSET, FUTEX_WAKE_OP});
  ContentionMeter meter;
  meter.pid_ = pid;
  meter.tids_ = ThreadsOf(pid);
  if (meter.tids_.empty()) return absl::NotFoundError(absl::StrCat("no process ", pid));
  for (const pid_t tid : meter.tids_) {
    absl::StatusOr<internal::UniqueFd> wait = OpenCounter(*tracepoint, tid, waits);
    if (!wait.ok()) return wait.status();
    absl::StatusOr<internal::UniqueFd> wake = OpenCounter(*tracepoint, tid, wakes);
    if (!wake.ok()) return wake.status();
    meter.waits_.push_back(std::move(*wait));
    meter.wakes_.push_back(std::move(*wake));
  }
  meter.voluntary_at_start_ = meter.Voluntary();
  return meter;
}

uint64_t ContentionMeter::Voluntary() const {
  uint64_t total = 0;
  for (const pid_t tid : tids_) {
    std::ifstream file(absl::StrFormat("/proc/%d/task/%d/status", pid_, tid));
    for (std::string line; std::getline(file, line);) {
      absl::string_view rest(line);
      uint64_t count = 0;
      if (absl::ConsumePrefix(&rest, "voluntary_ctxt_switches:") &&
          absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &count)) {
        total += count;
      }
    }
  }
  return total;
}

ContentionCounts ContentionMeter::Read() const {
  ContentionCounts counts;
  for (const internal::UniqueFd& fd : waits_) counts.futex_waits += ReadCount(fd);
  for (const internal::UniqueFd& fd : wakes_) counts.futex_wakes += ReadCount(fd);
  const uint64_t voluntary = Voluntary();
  counts.voluntary_switches = voluntary > voluntary_at_start_ ? voluntary - voluntary_at_start_ : 0;
  return counts;
}

}  // namespace ringfuse::tools
