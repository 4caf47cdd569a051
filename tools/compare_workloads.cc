#include "tools/compare_workloads.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/deadline.h"
#include "base/errno_status.h"
#include "base/fd.h"
#include "tools/bench_system.h"
#include "tools/compare_tree.h"
#include "tools/null_fs.h"
#include "tools/percentile.h"

namespace ringfuse::tools {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kBlock = 4096;
constexpr size_t kMiB = 1 << 20;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One operation of a timed loop: thread number and iteration in, an error out.
using Operation = std::function<absl::Status(int thread, uint64_t iteration)>;

struct LoopOutcome {
  uint64_t operations = 0;
  double seconds = 0;
  absl::Status error;  // the first operation that failed ends every thread
};

// Runs `op` in `threads` threads until `duration` has passed, an operation fails, or a signal
// asks to stop.
LoopOutcome RunTimedLoops(int threads, absl::Duration duration, const Operation& op) {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> total{0};
  std::mutex error_mutex;
  LoopOutcome outcome;
  std::vector<std::thread> workers;
  const Clock::time_point start = Clock::now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      uint64_t done = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        if (absl::Status status = op(t, done); !status.ok()) {
          std::lock_guard lock(error_mutex);
          if (outcome.error.ok()) outcome.error = status;
          stop = true;
          break;
        }
        ++done;
      }
      total += done;
    });
  }
  const base::Deadline deadline(duration);
  while (!stop && !deadline.passed() && !StopRequested()) {
    absl::SleepFor(std::min(absl::Milliseconds(20), deadline.left()));
  }
  stop = true;
  for (std::thread& worker : workers) worker.join();
  outcome.seconds = SecondsSince(start);
  outcome.operations = total;
  if (StopRequested() && outcome.error.ok()) outcome.error = absl::CancelledError("stopped");
  return outcome;
}

absl::StatusOr<double> Rate(const LoopOutcome& outcome) {
  if (!outcome.error.ok()) return outcome.error;
  return outcome.operations / outcome.seconds;
}

// The files the stat storm cycles through: the small files, or the floor's only file.
std::vector<std::string> StatPaths(const WorkloadTarget& target) {
  if (target.floor) return {target.root + "/" + NullFs::kFileName};
  std::vector<std::string> paths;
  for (int i = 0; i < target.files; ++i) {
    paths.push_back(absl::StrCat(target.root, "/", kFilesDir, "/", SmallFileName(i)));
  }
  return paths;
}

absl::StatusOr<WorkloadResult> StatStorm(const WorkloadTarget& target) {
  const std::vector<std::string> paths = StatPaths(target);
  const uint64_t threads = static_cast<uint64_t>(target.threads);
  const LoopOutcome outcome =
      RunTimedLoops(target.threads, target.duration, [&](int thread, uint64_t i) -> absl::Status {
        const std::string& path =
            paths[(i * threads + static_cast<uint64_t>(thread)) % paths.size()];
        struct stat st;
        if (::lstat(path.c_str(), &st) != 0) return base::ErrnoStatus(errno, "lstat " + path);
        return absl::OkStatus();
      });
  absl::StatusOr<double> rate = Rate(outcome);
  if (!rate.ok()) return rate.status();
  return WorkloadResult{{{"ops_per_s", *rate}}, static_cast<double>(outcome.operations)};
}

absl::StatusOr<WorkloadResult> CreateUnlink(const WorkloadTarget& target) {
  const LoopOutcome outcome =
      RunTimedLoops(target.threads, target.duration, [&](int thread, uint64_t i) -> absl::Status {
        const std::string path = absl::StrCat(target.root, "/", kCreateDirPrefix, thread, "/c", i);
        const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0) return base::ErrnoStatus(errno, "create " + path);
        ::close(fd);
        if (::unlink(path.c_str()) != 0) return base::ErrnoStatus(errno, "unlink " + path);
        return absl::OkStatus();
      });
  absl::StatusOr<double> rate = Rate(outcome);
  if (!rate.ok()) return rate.status();
  return WorkloadResult{{{"ops_per_s", *rate}}, static_cast<double>(outcome.operations)};
}

// One pass over the directory; a short listing is an error, not a fast pass.
absl::Status ListOnce(const std::string& dir, int expected) {
  DIR* stream = ::opendir(dir.c_str());
  if (stream == nullptr) return base::ErrnoStatus(errno, "opendir " + dir);
  int entries = 0;
  errno = 0;
  while (::readdir(stream) != nullptr) ++entries;
  const int error = errno;
  ::closedir(stream);
  if (error != 0) return base::ErrnoStatus(error, "readdir " + dir);
  if (entries < expected) {
    return absl::DataLossError(absl::StrCat("readdir saw ", entries, " of ", expected, " entries"));
  }
  return absl::OkStatus();
}

absl::StatusOr<WorkloadResult> Readdir(const WorkloadTarget& target) {
  const std::string dir = target.root + "/" + kFilesDir;
  const LoopOutcome outcome = RunTimedLoops(
      1, target.duration, [&](int, uint64_t) { return ListOnce(dir, target.files + 2); });
  absl::StatusOr<double> rate = Rate(outcome);
  if (!rate.ok()) return rate.status();
  return WorkloadResult{{{"passes_per_s", *rate}}, static_cast<double>(outcome.operations)};
}

absl::StatusOr<WorkloadResult> NullRoundTrip(const WorkloadTarget& target) {
  const std::string path = target.floor
                               ? target.root + "/" + NullFs::kFileName
                               : absl::StrCat(target.root, "/", kFilesDir, "/", SmallFileName(0));
  std::vector<double> latencies_us;
  latencies_us.reserve(1 << 20);
  const LoopOutcome outcome = RunTimedLoops(1, target.duration, [&](int, uint64_t) {
    struct stat st;
    const Clock::time_point before = Clock::now();
    if (::stat(path.c_str(), &st) != 0) return base::ErrnoStatus(errno, "stat " + path);
    latencies_us.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - before).count());
    return absl::OkStatus();
  });
  absl::StatusOr<double> rate = Rate(outcome);
  if (!rate.ok()) return rate.status();
  return WorkloadResult{{{"p50_us", Percentile(latencies_us, 0.5)},
                         {"p99_us", Percentile(latencies_us, 0.99)},
                         {"p999_us", Percentile(latencies_us, 0.999)},
                         {"ops_per_s", *rate}},
                        static_cast<double>(outcome.operations)};
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// Every transfer uses page-aligned buffers, as fio does: O_DIRECT needs them, and a 1 MiB buffer
// from malloc starts 16 bytes into a page, so it spans 257 pages, one more than FUSE's max_pages,
// and every sequential read(2) or write(2) of it splits into two requests (1 MiB - 16 and 16
// bytes), which charges every daemon for the benchmark's buffer.
std::unique_ptr<std::byte, FreeDeleter> PageAlignedBuffer(size_t size) {
  auto* memory = static_cast<std::byte*>(std::aligned_alloc(kBlock, size));
  if (memory == nullptr) throw std::bad_alloc();
  return std::unique_ptr<std::byte, FreeDeleter>(memory);
}

absl::StatusOr<double> RandomReadIops(int fd, int jobs, uint64_t blocks, absl::Duration duration,
                                      uint64_t& operations) {
  std::vector<std::unique_ptr<std::byte, FreeDeleter>> buffers;
  std::vector<std::mt19937_64> randoms;
  for (int j = 0; j < jobs; ++j) {
    buffers.push_back(PageAlignedBuffer(kBlock));
    randoms.emplace_back(j + 1);
  }
  const LoopOutcome outcome = RunTimedLoops(jobs, duration, [&](int job, uint64_t) {
    const off_t offset = static_cast<off_t>(randoms[job]() % blocks * kBlock);
    const ssize_t got = ::pread(fd, buffers[job].get(), kBlock, offset);
    if (got < 0) return base::ErrnoStatus(errno, "O_DIRECT pread");
    if (got != static_cast<ssize_t>(kBlock)) return absl::DataLossError("short O_DIRECT pread");
    return absl::OkStatus();
  });
  operations += outcome.operations;
  return Rate(outcome);
}

absl::StatusOr<WorkloadResult> RandomRead(const WorkloadTarget& target) {
  const std::string path = target.root + "/" + kBigFile;
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
  if (!fd.valid()) return base::ErrnoStatus(errno, "open O_DIRECT " + path);
  const uint64_t blocks = static_cast<uint64_t>(target.big_file_mib) * kMiB / kBlock;
  WorkloadResult result;
  uint64_t operations = 0;
  for (const auto& [jobs, name] : {std::pair{1, "iops_1job"}, std::pair{2, "iops_2jobs"}}) {
    absl::StatusOr<double> iops =
        RandomReadIops(fd.get(), jobs, blocks, target.duration, operations);
    if (!iops.ok()) return iops.status();
    result.metrics.push_back({name, *iops});
  }
  result.operations = static_cast<double>(operations);
  return result;
}

// Clean pages only, which is all there is: the tree was synced, and reads dirty nothing.
absl::Status EvictFromPageCache(const std::string& path) {
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return base::ErrnoStatus(errno, "open " + path);
  if (const int error = ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED); error != 0) {
    return base::ErrnoStatus(error, "posix_fadvise DONTNEED " + path);
  }
  return absl::OkStatus();
}

absl::StatusOr<WorkloadResult> SequentialRead(const WorkloadTarget& target) {
  const std::string path = target.root + "/" + kBigFile;
  for (const std::string& copy : {target.source + "/" + kBigFile, path}) {
    if (absl::Status evicted = EvictFromPageCache(copy); !evicted.ok()) return evicted;
  }
  base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return base::ErrnoStatus(errno, "open " + path);
  const auto buffer = PageAlignedBuffer(kMiB);
  uint64_t bytes = 0, reads = 0;
  const Clock::time_point start = Clock::now();
  const base::Deadline deadline(target.duration);
  while (!deadline.passed() && !StopRequested()) {
    const ssize_t got = ::read(fd.get(), buffer.get(), kMiB);
    if (got < 0) return base::ErrnoStatus(errno, "read " + path);
    if (got == 0) break;
    bytes += static_cast<uint64_t>(got);
    ++reads;
  }
  if (StopRequested()) return absl::CancelledError("stopped");
  return WorkloadResult{{{"mib_per_s", bytes / static_cast<double>(kMiB) / SecondsSince(start)}},
                        static_cast<double>(reads)};
}

absl::StatusOr<WorkloadResult> SequentialWrite(const WorkloadTarget& target) {
  const std::string path = target.root + "/seqwrite.out";
  base::UniqueFd fd(::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644));
  if (!fd.valid()) return base::ErrnoStatus(errno, "create " + path);
  const auto block = PageAlignedBuffer(kMiB);
  std::mt19937_64 random(7);
  for (size_t at = 0; at < kMiB; at += sizeof(uint64_t)) {
    const uint64_t word = random();
    std::memcpy(block.get() + at, &word, sizeof(word));
  }
  uint64_t writes = 0;
  const Clock::time_point start = Clock::now();
  const base::Deadline deadline(target.duration);
  absl::Status status;
  while (writes < static_cast<uint64_t>(target.big_file_mib) && !deadline.passed() &&
         !StopRequested() && status.ok()) {
    const ssize_t written = ::write(fd.get(), block.get(), kMiB);
    if (written != static_cast<ssize_t>(kMiB)) status = base::ErrnoStatus(errno, "write " + path);
    ++writes;
  }
  if (status.ok() && ::fsync(fd.get()) != 0) status = base::ErrnoStatus(errno, "fsync " + path);
  const double seconds = SecondsSince(start);
  ::unlink(path.c_str());
  if (status.ok() && StopRequested()) status = absl::CancelledError("stopped");
  if (!status.ok()) return status;
  return WorkloadResult{{{"mib_per_s", writes / seconds}}, static_cast<double>(writes)};
}

using Runner = absl::StatusOr<WorkloadResult> (*)(const WorkloadTarget&);

struct WorkloadSpec {
  Runner run;
  std::vector<std::string> metrics;
  bool on_floor;
  bool takes_threads = false;
};

const std::map<std::string, WorkloadSpec>& Specs() {
  static const auto* specs = new std::map<std::string, WorkloadSpec>{
      {"stat", {StatStorm, {"ops_per_s"}, true, true}},
      {"create", {CreateUnlink, {"ops_per_s"}, false, true}},
      {"readdir", {Readdir, {"passes_per_s"}, false}},
      {"null", {NullRoundTrip, {"p50_us", "p99_us", "p999_us", "ops_per_s"}, true}},
      {"randread", {RandomRead, {"iops_1job", "iops_2jobs"}, false}},
      {"seqread", {SequentialRead, {"mib_per_s"}, false}},
      {"seqwrite", {SequentialWrite, {"mib_per_s"}, false}},
  };
  return *specs;
}

}  // namespace

const std::vector<std::string>& WorkloadNames() {
  static const auto* names = new std::vector<std::string>{"stat",     "create",  "readdir", "null",
                                                          "randread", "seqread", "seqwrite"};
  return *names;
}

std::vector<std::string> WorkloadMetricNames(const std::string& workload) {
  return Specs().at(workload).metrics;
}

std::vector<int> ThreadCounts(const std::string& workload, const std::vector<int>& counts) {
  if (Specs().at(workload).takes_threads) return counts;
  return {0};
}

bool FloorServes(const std::string& workload) { return Specs().at(workload).on_floor; }

absl::StatusOr<WorkloadResult> RunWorkload(const std::string& workload,
                                           const WorkloadTarget& target) {
  return Specs().at(workload).run(target);
}

}  // namespace ringfuse::tools
