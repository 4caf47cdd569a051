// ringfuse-trace: reads the JSON lines of ringfused --trace=FILE (ringfuse/json_trace.h).
//
//   ringfuse-trace summary FILE   per-opcode counts, errors and latency percentiles
//   ringfuse-trace follow FILE    every event as a readable line, as the file grows, until
//                                 SIGINT or SIGTERM (from the start; again after truncation)
//
// Lines that are not trace events are reported on standard error by number and skipped.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "base/fd.h"
#include "tools/trace_format.h"
#include "tools/trace_summary.h"

namespace ringfuse::tools {
namespace {

constexpr char kUsage[] =
    "usage: ringfuse-trace summary FILE   per-opcode counts, errors and latency percentiles\n"
    "       ringfuse-trace follow FILE    print events as FILE grows, until interrupted\n";

void Skipped(const std::string& file, std::string_view problem) {
  std::fprintf(stderr, "ringfuse-trace: %s: %.*s (skipped)\n", file.c_str(),
               static_cast<int>(problem.size()), problem.data());
}

int Summary(const std::string& file) {
  std::ifstream in(file);
  if (!in) {
    std::fprintf(stderr, "ringfuse-trace: %s: %s\n", file.c_str(), std::strerror(errno));
    return 1;
  }
  TraceSummary summary;
  uint64_t number = 0;
  for (std::string line; std::getline(in, line);) summary.Add(++number, line);
  for (const std::string& problem : summary.problems()) Skipped(file, problem);
  std::fputs(summary.Report().c_str(), stdout);
  return 0;
}

// Prints each whole line of `pending`, keeping a last partial one for the next read.
void PrintLines(const std::string& file, std::string& pending, uint64_t& number) {
  size_t start = 0;
  for (size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1) {
    ++number;
    const std::string_view line(pending.data() + start, end - start);
    absl::StatusOr<std::string> shown = FormatTraceLine(line);
    if (shown.ok()) {
      std::printf("%s\n", shown->c_str());
    } else {
      Skipped(file,
              "line " + std::to_string(number) + ": " + std::string(shown.status().message()));
    }
  }
  pending.erase(0, start);
  std::fflush(stdout);
}

int Follow(const std::string& file) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigprocmask(SIG_BLOCK, &stop, nullptr);
  const base::UniqueFd signals(::signalfd(-1, &stop, SFD_CLOEXEC));
  const base::UniqueFd in(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid() || !signals.valid()) {
    std::fprintf(stderr, "ringfuse-trace: %s: %s\n", file.c_str(), std::strerror(errno));
    return 1;
  }
  std::string pending;
  uint64_t number = 0;
  off_t offset = 0;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::pread(in.get(), chunk, sizeof(chunk), offset);
    if (n > 0) {
      offset += n;
      pending.append(chunk, static_cast<size_t>(n));
      PrintLines(file, pending, number);
      continue;
    }
    struct stat st {};
    if (::fstat(in.get(), &st) == 0 && st.st_size < offset) {  // truncated: a new trace
      offset = 0;
      number = 0;
      pending.clear();
    }
    pollfd stopped{signals.get(), POLLIN, 0};
    if (::poll(&stopped, 1, 100) > 0) return 0;  // until interrupted, as tail -f
  }
}

}  // namespace
}  // namespace ringfuse::tools

int main(int argc, char** argv) {
  const std::string_view command = argc == 3 ? argv[1] : "";
  if (command == "summary") return ringfuse::tools::Summary(argv[2]);
  if (command == "follow") return ringfuse::tools::Follow(argv[2]);
  std::fputs(ringfuse::tools::kUsage,
             argc == 2 && std::string_view(argv[1]) == "--help" ? stdout : stderr);
  return argc == 2 && std::string_view(argv[1]) == "--help" ? 0 : 2;
}
