#include "tools/proc_stats.h"

#include <time.h>

#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace ringfuse::tools {

double ProcessCpuMicros(pid_t pid) {
  clockid_t clock;
  timespec used;
  if (::clock_getcpuclockid(pid, &clock) != 0 || ::clock_gettime(clock, &used) != 0) return 0;
  return static_cast<double>(used.tv_sec) * 1e6 + static_cast<double>(used.tv_nsec) / 1e3;
}

std::optional<double> PeakRssMib(pid_t pid) {
  std::ifstream file(absl::StrFormat("/proc/%d/status", pid));
  for (std::string line; std::getline(file, line);) {
    absl::string_view rest(line);
    if (!absl::ConsumePrefix(&rest, "VmHWM:")) continue;
    rest = absl::StripAsciiWhitespace(rest);
    absl::ConsumeSuffix(&rest, "kB");
    double kib = 0;
    if (absl::SimpleAtod(absl::StripAsciiWhitespace(rest), &kib)) return kib / 1024;
  }
  return std::nullopt;
}

}  // namespace ringfuse::tools
