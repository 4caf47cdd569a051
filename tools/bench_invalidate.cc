#include "tools/bench_invalidate.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <optional>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/errno_status.h"
#include "base/uring_switch.h"
#include "tools/bench_daemon.h"
#include "tools/bench_report.h"
#include "tools/bench_system.h"
#include "tools/bench_tree.h"

namespace ringfuse::tools {
namespace {

// `none` leaves the kernel's dentries valid: the negative control that shows the walk's lookup
// count tells an invalidation apart. It also leaves the daemon without the names the kernel
// holds (a publish forgets them), so only an epoch, which needs no names, can bring the cache
// back to a known state before the next method is measured.
constexpr const char* kControlMethod = "none";
constexpr const char* kResetMethod = "epoch";

// One ringfused serving one tree, and which of the two revisions it serves.
class ServedTree {
 public:
  ServedTree(const DaemonProcess& daemon, const Tree& tree, std::string mountpoint,
             std::string current)
      : daemon_(daemon),
        tree_(tree),
        mountpoint_(std::move(mountpoint)),
        current_(std::move(current)) {}

  // Loads every entry into the kernel's caches.
  absl::Status Load() const { return Walk(mountpoint_, tree_); }

  // Publishes the other revision with `method`, then walks the tree, which both checks that
  // the invalidation happened and loads the caches again for the next publish.
  absl::StatusOr<PublishSample> PublishAndWalk(const std::string& method) {
    const std::string next = current_ == kFirstRevision ? kSecondRevision : kFirstRevision;
    absl::StatusOr<ControlAnswer> published =
        daemon_.Ask(absl::StrFormat("publish %s %s", next, method));
    if (!published.ok()) return published.status();
    current_ = next;
    PublishSample sample;
    sample.round_trip_us = absl::ToDoubleMicroseconds(published->round_trip);
    for (auto [name, field] : {std::pair{"invalidate_us", &PublishSample::invalidate_us},
                               std::pair{"switch_us", &PublishSample::switch_us},
                               std::pair{"entries", &PublishSample::entries},
                               std::pair{"inodes", &PublishSample::inodes},
                               std::pair{"messages", &PublishSample::messages},
                               std::pair{"not_cached", &PublishSample::not_cached}}) {
      absl::StatusOr<double> value = NumberField(published->fields, name);
      if (!value.ok()) return value.status();
      sample.*field = *value;
    }
    absl::StatusOr<double> before = Lookups();
    if (!before.ok()) return before.status();
    if (absl::Status walked = Load(); !walked.ok()) return walked;
    absl::StatusOr<double> after = Lookups();
    if (!after.ok()) return after.status();
    sample.lookups_after = *after - *before;
    return sample;
  }

 private:
  absl::StatusOr<double> Lookups() const {
    absl::StatusOr<ControlAnswer> status = daemon_.Ask("status");
    if (!status.ok()) return status.status();
    return NumberField(status->fields, "lookups");
  }

  const DaemonProcess& daemon_;
  const Tree& tree_;
  const std::string mountpoint_;
  std::string current_;
};

// What a walk after a publish says against the method's promise, or nothing if they agree.
std::optional<std::string> CheckWalk(const std::string& method, const PublishSample& sample,
                                     size_t walked) {
  const bool control = method == kControlMethod;
  if (control == (sample.lookups_after < static_cast<double>(walked))) return std::nullopt;
  if (control) {
    return absl::StrFormat(
        "after %s the walk of %d entries made %.0f lookups: the caches were lost anyway, so the "
        "check cannot tell an invalidation apart",
        method, walked, sample.lookups_after);
  }
  return absl::StrFormat(
      "after %s the walk of %d entries made only %.0f lookups: the kernel kept cached entries",
      method, walked, sample.lookups_after);
}

// One run: every method once, each starting at a different one so that none always follows
// the same neighbour.
absl::Status MeasureRun(ServedTree& served, const InvalidateConfig& config, int run,
                        TreeResult& result) {
  const size_t count = config.methods.size();
  for (size_t k = 0; k < count; ++k) {
    if (StopRequested()) return absl::CancelledError("stopped by a signal");
    const std::string& method = config.methods[(run + k) % count];
    absl::StatusOr<PublishSample> sample = served.PublishAndWalk(method);
    if (!sample.ok()) return sample.status();
    if (std::optional<std::string> problem = CheckWalk(method, *sample, result.tree.paths.size())) {
      std::fprintf(stderr, "FAILED %d inodes, run %d: %s\n", result.inodes, run + 1,
                   problem->c_str());
      ++result.failed_checks;
    }
    result.by_method[method].push_back(*sample);
    if (method == kControlMethod) {
      if (absl::StatusOr<PublishSample> reset = served.PublishAndWalk(kResetMethod); !reset.ok()) {
        return reset.status();
      }
    }
  }
  return absl::OkStatus();
}

absl::Status MakeDirectories(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    if (::mkdir(path.c_str(), 0755) != 0) return base::ErrnoStatus(errno, path);
  }
  return absl::OkStatus();
}

absl::StatusOr<TreeResult> MeasureTree(const InvalidateConfig& config, int inodes) {
  absl::StatusOr<TempDir> dir = TempDir::Create("ringfuse-bench");
  if (!dir.ok()) return dir.status();
  const std::string repo = dir->path() + "/repo", mountpoint = dir->path() + "/mnt";
  if (absl::Status made = MakeDirectories({repo, mountpoint}); !made.ok()) return made;
  absl::StatusOr<Tree> tree = BuildRevisions(repo, inodes);
  if (!tree.ok()) return tree.status();
  absl::StatusOr<DaemonProcess> daemon =
      DaemonProcess::Start({.binary = config.ringfused,
                            .source = repo,
                            .revisions = true,
                            .mountpoint = mountpoint,
                            .transport = config.transport,
                            .mount_options = {},
                            .log = dir->path() + "/ringfused.log",
                            .keeper = ""});
  if (!daemon.ok()) return daemon.status();
  TreeResult result{inodes, *tree, daemon->TransportChoice(), {}, 0};
  std::printf("%d inodes: %d directories, %d files, %d symlinks; ringfused: %s\n", inodes,
              tree->directories, tree->files, tree->symlinks, result.transport_choice.c_str());
  std::fflush(stdout);
  absl::StatusOr<ControlAnswer> status = daemon->Ask("status");
  if (!status.ok()) return status.status();
  ServedTree served(*daemon, *tree, mountpoint, status->fields["revision"]);
  if (absl::Status loaded = served.Load(); !loaded.ok()) return loaded;
  for (int run = 0; run < config.runs; ++run) {
    if (absl::Status measured = MeasureRun(served, config, run, result); !measured.ok()) {
      return measured;
    }
  }
  if (absl::Status stopped = daemon->Stop(); !stopped.ok()) return stopped;
  return result;
}

}  // namespace

int RunInvalidate(const InvalidateConfig& config) {
  base::UringSwitch uring;
  if (config.transport == "uring-cmd") {
    if (absl::Status on = uring.TurnOn(); !on.ok()) {
      std::fprintf(stderr, "ringfuse-bench: %s\n", std::string(on.message()).c_str());
      return 1;
    }
  }
  std::vector<TreeResult> results;
  absl::Status status;
  for (const int inodes : config.inode_counts) {
    absl::StatusOr<TreeResult> result = MeasureTree(config, inodes);
    if (!result.ok()) {
      status = result.status();
      break;
    }
    results.push_back(std::move(*result));
  }
  PrintTables(results, config.methods, config.runs);
  if (StopRequested()) return std::fprintf(stderr, "ringfuse-bench: stopped by a signal\n"), 130;
  if (!status.ok()) {
    std::fprintf(stderr, "ringfuse-bench: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  int failed = 0;
  for (const TreeResult& result : results) failed += result.failed_checks;
  if (failed > 0) {
    std::fprintf(stderr, "ringfuse-bench: %d check(s) failed (see FAILED above)\n", failed);
    return 1;
  }
  return 0;
}

}  // namespace ringfuse::tools
