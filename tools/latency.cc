// ringfuse-latency: round-trip latency and throughput of stat() through each transport.
//
// For every round, transport and client count, it mounts the null filesystem (tools/null_fs.h)
// in a child process over that transport, runs the clients' stat() loops for a fixed time, and
// records per-call latency, calls per second, and the server's CPU time per call (from the
// child's /proc/<pid>/stat). Rounds interleave the transports so that a noisy neighbour hurts
// them alike; the table shows medians over rounds. Needs root (it mounts, and switches
// FUSE-over-io_uring on for the run, restoring the old setting).
//
//   ringfuse-latency [--transports=threads,uring,uring-cmd] [--clients=1,2] [--seconds=5]
//                    [--rounds=3] [--depth=N]
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/uring_switch.h"
#include "tools/null_fs.h"
#include "tools/null_server.h"
#include "tools/percentile.h"
#include "tools/proc_stats.h"

ABSL_FLAG(std::string, transports, "threads,uring,uring-cmd", "transports to compare");
ABSL_FLAG(std::string, clients, "1,2", "client thread counts to run");
ABSL_FLAG(int, seconds, 5, "seconds per measurement");
ABSL_FLAG(int, rounds, 3, "rounds; the table shows the median of each cell");
ABSL_FLAG(int, depth, 0, "queue depth for the io_uring transports (0: each one's default)");

namespace ringfuse::tools {
namespace {

struct Measurement {
  double ops_per_second = 0;
  double p50_us = 0;
  double p99_us = 0;
  double server_cpu_us_per_op = 0;
};

struct Server {
  pid_t pid = -1;
  FILE* output = nullptr;
};

absl::StatusOr<Server> StartServer(const std::string& transport, const std::string& mountpoint) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return absl::InternalError("pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    close(pipe_fds[0]);
    const std::string self = "/proc/self/exe";
    const std::string depth = absl::StrCat("--depth=", absl::GetFlag(FLAGS_depth));
    execl(self.c_str(), "ringfuse-latency", "serve", transport.c_str(), depth.c_str(),
          mountpoint.c_str(), nullptr);
    _exit(127);
  }
  close(pipe_fds[1]);
  Server server{pid, fdopen(pipe_fds[0], "r")};
  char line[64] = {};
  if (std::fgets(line, sizeof(line), server.output) == nullptr || std::string(line) != "ready\n") {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    std::fclose(server.output);
    return absl::UnavailableError(absl::StrFormat("the %s server did not start", transport));
  }
  return server;
}

void StopServer(Server& server) {
  kill(server.pid, SIGTERM);
  waitpid(server.pid, nullptr, 0);
  std::fclose(server.output);
}

Measurement MeasureStat(const std::string& path, int clients, pid_t server) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::vector<double>> latencies(clients);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  const double cpu_before = ProcessCpuMicros(server);
  const auto start = Clock::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      latencies[c].reserve(1 << 20);
      struct stat st;
      while (!stop.load(std::memory_order_relaxed)) {
        const auto before = Clock::now();
        if (::stat(path.c_str(), &st) != 0) std::abort();
        latencies[c].push_back(
            std::chrono::duration<double, std::micro>(Clock::now() - before).count());
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(absl::GetFlag(FLAGS_seconds)));
  stop = true;
  for (std::thread& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const double cpu = ProcessCpuMicros(server) - cpu_before;
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  Measurement m;
  m.ops_per_second = all.size() / elapsed;
  m.server_cpu_us_per_op = all.empty() ? 0 : cpu / all.size();
  m.p50_us = Percentile(all, 0.50);
  m.p99_us = Percentile(all, 0.99);
  return m;
}

double Median(std::vector<double> values) { return Percentile(values, 0.5); }

// Switches FUSE-over-io_uring on for the run and back to what it was when destroyed.
int Run() {
  const std::vector<std::string> transports =
      absl::StrSplit(absl::GetFlag(FLAGS_transports), ',', absl::SkipEmpty());
  std::vector<int> client_counts;
  for (absl::string_view c : absl::StrSplit(absl::GetFlag(FLAGS_clients), ',', absl::SkipEmpty())) {
    int n = 0;
    if (!absl::SimpleAtoi(c, &n) || n < 1) return std::fprintf(stderr, "bad --clients\n"), 2;
    client_counts.push_back(n);
  }
  base::UringSwitch uring;  // for the uring-cmd rows; the machine's setting comes back at the end
  if (absl::Status on = uring.TurnOn(); !on.ok()) {
    std::fprintf(stderr, "ringfuse-latency: %s\n", std::string(on.message()).c_str());
  }
  char dir_template[] = "/tmp/ringfuse-latency.XXXXXX";
  const std::string mountpoint = mkdtemp(dir_template);
  std::map<std::pair<std::string, int>, std::vector<Measurement>> results;
  for (int round = 1; round <= absl::GetFlag(FLAGS_rounds); ++round) {
    for (const std::string& transport : transports) {
      for (int clients : client_counts) {
        absl::StatusOr<Server> server = StartServer(transport, mountpoint);
        if (!server.ok()) {
          std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
          continue;
        }
        const Measurement m =
            MeasureStat(mountpoint + "/" + NullFs::kFileName, clients, server->pid);
        StopServer(*server);
        results[{transport, clients}].push_back(m);
        std::printf(
            "round %d %-9s %d client(s): %8.0f stat/s  p50 %6.1f us  p99 %6.1f us  "
            "server CPU %5.1f us/stat\n",
            round, transport.c_str(), clients, m.ops_per_second, m.p50_us, m.p99_us,
            m.server_cpu_us_per_op);
        std::fflush(stdout);
      }
    }
  }
  rmdir(mountpoint.c_str());
  std::printf("\nmedians over %d rounds of %d s (stat() = LOOKUP + GETATTR):\n",
              absl::GetFlag(FLAGS_rounds), absl::GetFlag(FLAGS_seconds));
  std::printf("| transport | clients | stat/s | p50 us | p99 us | server CPU us/stat |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const auto& [key, runs] : results) {
    std::vector<double> ops, p50, p99, cpu;
    for (const Measurement& m : runs) {
      ops.push_back(m.ops_per_second);
      p50.push_back(m.p50_us);
      p99.push_back(m.p99_us);
      cpu.push_back(m.server_cpu_us_per_op);
    }
    std::printf("| %s | %d | %.0f | %.1f | %.1f | %.1f |\n", key.first.c_str(), key.second,
                Median(ops), Median(p50), Median(p99), Median(cpu));
  }
  return 0;
}

}  // namespace
}  // namespace ringfuse::tools

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "stat() latency and throughput through each ringfuse transport (root).\n"
      "  ringfuse-latency [--transports=threads,uring,uring-cmd] [--clients=1,2] "
      "[--seconds=5] [--rounds=3] [--depth=N]");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() == 4 && std::string(args[1]) == "serve") {
    return ringfuse::tools::ServeNullFs(args[2], absl::GetFlag(FLAGS_depth), args[3]);
  }
  return ringfuse::tools::Run();
}
