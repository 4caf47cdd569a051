#include "tools/bench_notify_floor.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/deadline.h"
#include "ringfuse/session.h"
#include "tools/null_fs.h"

namespace ringfuse::tools {
namespace {

// Node ids far above any the null filesystem hands out; names it never answers.
constexpr uint64_t kAbsentNodeBase = 1ull << 40;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Microseconds per message for `count` calls of `send`, each of which must come back NotFound.
double TimePerMessage(int count, const std::function<absl::Status(int)>& send, bool& all_absent) {
  const base::Stopwatch stopwatch;
  for (int i = 0; i < count; ++i) {
    if (!absl::IsNotFound(send(i))) all_absent = false;
  }
  return absl::ToDoubleMicroseconds(stopwatch.elapsed()) / count;
}

}  // namespace

int RunNotifyFloor(const NotifyFloorConfig& config) {
  char dir_template[] = "/tmp/ringfuse-notify-floor.XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) return 1;
  NullFs fs;
  SessionOptions options;
  options.mount.mountpoint = dir_template;
  options.transport = *ParseTransportKind(config.transport);
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Start(options, fs);
  if (!session.ok()) {
    std::fprintf(stderr, "ringfuse-bench: %s\n", std::string(session.status().message()).c_str());
    ::rmdir(dir_template);
    return 1;
  }
  Notifier& notifier = (*session)->notifier();
  std::vector<double> inode_us, entry_us;
  bool all_absent = true;
  for (int run = 0; run < config.runs; ++run) {
    inode_us.push_back(TimePerMessage(
        config.count, [&](int i) { return notifier.InvalInode(kAbsentNodeBase + i, 0, 0); },
        all_absent));
    entry_us.push_back(TimePerMessage(
        config.count,
        [&](int i) { return notifier.InvalEntry(wire::kRootId, absl::StrCat("absent-", i)); },
        all_absent));
  }
  (*session)->Stop();
  (*session)->Wait();
  session->reset();
  ::rmdir(dir_template);
  std::printf(
      "notifications that find nothing cached, %d of each per run, median of %d runs (%s):\n"
      "| message | us per message | us for %d |\n|---|---|---|\n"
      "| INVAL_INODE | %.2f | %.0f |\n| INVAL_ENTRY | %.2f | %.0f |\n",
      config.count, config.runs, config.transport.c_str(), config.count, Median(inode_us),
      Median(inode_us) * config.count, Median(entry_us), Median(entry_us) * config.count);
  if (!all_absent) {
    std::printf("check failed: the kernel found something it should not have cached\n");
    return 1;
  }
  return 0;
}

}  // namespace ringfuse::tools
