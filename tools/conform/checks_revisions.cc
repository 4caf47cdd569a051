// The case ringfuse was started for: a read-only revisioned filesystem (like CernVM-FS) switches
// revision while clients hammer it with readlink(), and INC_EPOCH makes every cached name stale
// with one message.
#include <unistd.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/conform/check.h"
#include "tools/conform/context.h"
#include "tools/conform/fixture.h"
#include "tools/conform/invalidation.h"

namespace ringfuse::conform {

namespace {

constexpr int kLinks = 64;
constexpr int kReaders = 4;

std::string OldTarget(int i) { return absl::StrCat("A/", i); }
// Longer than the old target, so that a target read with the old length shows as cut short.
std::string NewTarget(int i) { return absl::StrCat("B/the-next-revision/", i); }

struct Tally {
  std::atomic<long> reads{0}, after_switch{0}, stale{0}, truncated{0}, failed{0};
};

// Reads every link in a loop until `stop`; counts reads of an old target that began after
// `switched`, targets that are neither revision's, and readlinks that fail.
void ReadLinks(const Mounted& mount, const std::atomic<bool>& switched,
               const std::atomic<bool>& stop, Tally& tally) {
  char buffer[256];
  while (!stop) {
    for (int i = 0; i < kLinks && !stop; ++i) {
      const bool began_after = switched.load();
      const ssize_t n =
          ::readlink(mount.Path(absl::StrCat("l", i)).c_str(), buffer, sizeof(buffer));
      ++tally.reads;
      if (began_after) ++tally.after_switch;
      if (n < 0) {
        ++tally.failed;
        continue;
      }
      const std::string target(buffer, static_cast<size_t>(n));
      if (target == OldTarget(i)) {
        if (began_after) ++tally.stale;
      } else if (target != NewTarget(i)) {
        ++tally.truncated;
      }
    }
  }
}

void IncEpochDuringReadlinkStorm(CheckContext& context) {
  ExpectNoStaleOrTruncatedLinkAcrossSwitch(context, [](Notifier& n) { return n.IncEpoch(); });
}

}  // namespace

void ExpectNoStaleOrTruncatedLinkAcrossSwitch(CheckContext& context, const Invalidate& invalidate) {
  MemFs fs(Cached());
  for (int i = 0; i < kLinks; ++i) fs.AddSymlink(wire::kRootId, absl::StrCat("l", i), OldTarget(i));
  SessionOptions options;
  options.init.flags |= wire::init_flag::kCacheSymlinks;
  const std::unique_ptr<Mounted> mount = context.Mount(fs, options);
  if (!mount) return;
  // Every name and target in the kernel's caches before the storm: the switch below removes each
  // name for a moment, which a lookup must not see.
  char buffer[256];
  for (int i = 0; i < kLinks; ++i)
    ::readlink(mount->Path(absl::StrCat("l", i)).c_str(), buffer, sizeof(buffer));
  std::atomic<bool> switched{false}, stop{false};
  Tally tally;
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&] { ReadLinks(*mount, switched, stop, tally); });
  }
  WaitUntil([&] { return tally.reads >= kReaders * kLinks; });
  // The new revision: every name now leads to a new node with a new target.
  for (int i = 0; i < kLinks; ++i) {
    fs.Remove(wire::kRootId, absl::StrCat("l", i));
    fs.AddSymlink(wire::kRootId, absl::StrCat("l", i), NewTarget(i));
  }
  const auto start = std::chrono::steady_clock::now();
  const absl::Status sent = invalidate(mount->notifier());
  const double took_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  switched = true;
  WaitUntil([&] { return tally.after_switch >= kReaders * kLinks; });
  stop = true;
  for (std::thread& reader : readers) reader.join();
  context.Evidence(absl::StrFormat(
      "%d readers, %d links: %d readlinks, %d begun after the switch; %d stale, %d cut short, "
      "%d failed; the invalidation took %.0f us",
      kReaders, kLinks, tally.reads.load(), tally.after_switch.load(), tally.stale.load(),
      tally.truncated.load(), tally.failed.load(), took_us));
  context.Expect(sent.ok(), absl::StrCat("the invalidation is accepted: ", sent.ToString()));
  context.Expect(tally.after_switch > kLinks, "clients read every link after the switch");
  context.Expect(tally.stale == 0, "no readlink begun after the switch returns an old target");
  context.Expect(tally.truncated == 0, "no readlink returns a target cut short");
  context.Expect(tally.failed == 0, "no readlink fails");
}

std::vector<Check> RevisionChecks() {
  return {
      {.name = "revision.inc_epoch_readlink_storm",
       .summary = "INC_EPOCH over a revision switch under a readlink storm: nothing stale or cut",
       .needs_minor = 44,
       .run = IncEpochDuringReadlinkStorm},
  };
}

}  // namespace ringfuse::conform
