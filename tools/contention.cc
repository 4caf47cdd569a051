#include "tools/contention.h"

#include <linux/futex.h>

#include <fstream>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace ringfuse::tools {
namespace {

constexpr const char* kFutexTracepoint = "syscalls/sys_enter_futex";

// The op values of each kind, with and without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME.
std::string FilterOf(std::initializer_list<int> ops) {
  std::string filter;
  for (const int op : ops) {
    for (const int flags :
         {0, FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME, FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME}) {
      absl::StrAppend(&filter, filter.empty() ? "" : " || ", "op == ", op | flags);
    }
  }
  return filter;
}

}  // namespace

absl::StatusOr<ContentionMeter> ContentionMeter::Start(pid_t pid) {
  std::vector<pid_t> tids = ThreadsOf(pid);
  absl::StatusOr<TracepointCounter> waits =
      TracepointCounter::Start(tids, kFutexTracepoint, FilterOf({FUTEX_WAIT, FUTEX_WAIT_BITSET}));
  if (!waits.ok()) return waits.status();
  absl::StatusOr<TracepointCounter> wakes = TracepointCounter::Start(
      tids, kFutexTracepoint, FilterOf({FUTEX_WAKE, FUTEX_WAKE_BITSET, FUTEX_WAKE_OP}));
  if (!wakes.ok()) return wakes.status();
  return ContentionMeter(pid, std::move(tids), std::move(*waits), std::move(*wakes));
}

ContentionMeter::ContentionMeter(pid_t pid, std::vector<pid_t> tids, TracepointCounter waits,
                                 TracepointCounter wakes)
    : pid_(pid),
      tids_(std::move(tids)),
      waits_(std::move(waits)),
      wakes_(std::move(wakes)),
      voluntary_at_start_(Voluntary()) {}

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
  counts.futex_waits = waits_.Read();
  counts.futex_wakes = wakes_.Read();
  const uint64_t voluntary = Voluntary();
  counts.voluntary_switches = voluntary > voluntary_at_start_ ? voluntary - voluntary_at_start_ : 0;
  return counts;
}

}  // namespace ringfuse::tools
