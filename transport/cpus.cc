#include "transport/cpus.h"

#include <pthread.h>
#include <sched.h>

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ringfuse::internal {

absl::StatusOr<std::vector<int>> ParseCpuList(std::string_view text) {
  std::vector<int> cpus;
  const absl::string_view list =
      absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size()));
  for (absl::string_view range : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    const std::vector<absl::string_view> ends = absl::StrSplit(range, '-');
    int first = 0;
    int last = 0;
    if (ends.size() > 2 || !absl::SimpleAtoi(ends.front(), &first) ||
        !absl::SimpleAtoi(ends.back(), &last) || first < 0 || last < first) {
      return absl::InvalidArgumentError(
          absl::StrFormat("malformed CPU list \"%s\"", std::string(list)));
    }
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  if (cpus.empty()) return absl::InvalidArgumentError("empty CPU list");
  return cpus;
}

namespace {

absl::StatusOr<std::vector<int>> ReadCpuList(const char* path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  if (!file) return absl::NotFoundError(absl::StrFormat("cannot read %s", path));
  return ParseCpuList(text.str());
}

}  // namespace

absl::StatusOr<std::vector<int>> PossibleCpus() {
  return ReadCpuList("/sys/devices/system/cpu/possible");
}

absl::StatusOr<std::vector<int>> OnlineCpus() {
  return ReadCpuList("/sys/devices/system/cpu/online");
}

absl::Status PinCurrentThread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int error = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (error == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("cannot pin to CPU %d (offline?)", cpu));
}

}  // namespace ringfuse::internal
