#include "tools/tracepoint_counter.h"

#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/errno_status.h"

namespace ringfuse::tools {
namespace {

constexpr const char* kTracefs = "/sys/kernel/tracing";

// The id perf_event_open knows `tracepoint` by; tracefs is mounted first if the machine has not
// (a fresh boot here has it empty).
absl::StatusOr<uint64_t> TracepointId(const std::string& tracepoint) {
  const std::string path = absl::StrCat(kTracefs, "/events/", tracepoint, "/id");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && ::mount("nodev", kTracefs, "tracefs", 0, nullptr) != 0 &&
      errno != EBUSY) {
    return base::ErrnoStatus(errno, absl::StrCat("mount tracefs on ", kTracefs));
  }
  std::ifstream file(path);
  uint64_t id = 0;
  if (!(file >> id)) return absl::UnavailableError(absl::StrCat("cannot read ", path));
  return id;
}

absl::StatusOr<base::UniqueFd> OpenCounter(uint64_t tracepoint_id, pid_t tid,
                                           const std::string& filter) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.size = sizeof(attr);
  attr.config = tracepoint_id;
  base::UniqueFd fd(
      static_cast<int>(::syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC)));
  if (!fd.valid()) return base::ErrnoStatus(errno, absl::StrCat("perf_event_open ", tid));
  if (!filter.empty() && ::ioctl(fd.get(), PERF_EVENT_IOC_SET_FILTER, filter.c_str()) != 0) {
    return base::ErrnoStatus(errno, "PERF_EVENT_IOC_SET_FILTER " + filter);
  }
  return fd;
}

uint64_t ReadCount(const base::UniqueFd& fd) {
  uint64_t count = 0;
  return ::read(fd.get(), &count, sizeof(count)) == sizeof(count) ? count : 0;
}

}  // namespace

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

absl::StatusOr<TracepointCounter> TracepointCounter::Start(const std::vector<pid_t>& tids,
                                                           const std::string& tracepoint,
                                                           const std::string& filter) {
  // No thread would read as a count of 0: a figure, where there is none.
  if (tids.empty()) return absl::NotFoundError("no thread to count (is the process gone?)");
  absl::StatusOr<uint64_t> id = TracepointId(tracepoint);
  if (!id.ok()) return id.status();
  TracepointCounter counter;
  for (const pid_t tid : tids) {
    absl::StatusOr<base::UniqueFd> fd = OpenCounter(*id, tid, filter);
    if (!fd.ok()) return fd.status();
    counter.per_thread_.push_back(std::move(*fd));
  }
  return counter;
}

uint64_t TracepointCounter::Read() const {
  uint64_t total = 0;
  for (const base::UniqueFd& fd : per_thread_) total += ReadCount(fd);
  return total;
}

}  // namespace ringfuse::tools
