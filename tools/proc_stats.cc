#include "tools/proc_stats.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace ringfuse::tools {

double ProcessCpuMicros(pid_t pid) {
  std::ifstream file(absl::StrFormat("/proc/%d/stat", pid));
  std::string text((std::istreambuf_iterator<char>(file)), {});
  // The command name in parentheses may hold spaces: fields are counted after its ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; fields >> field && i <= 15; ++i) {
    double value = 0;
    if ((i == 14 || i == 15) && absl::SimpleAtod(field, &value)) ticks += value;
  }
  return ticks * 1e6 / static_cast<double>(sysconf(_SC_CLK_TCK));
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
