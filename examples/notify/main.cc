// notify: a filesystem whose content changes from outside the request path, kept fresh in the
// kernel's caches by notifications instead of short timeouts (live_fs.h is the tree).
//
// Usage: notify [--no-notify] MOUNTPOINT, then commands on standard input, one per line:
//   bump         counter + 1; the new bytes are pushed into the page cache (Store)
//   say TEXT     message becomes TEXT; its pages and attributes are dropped (InvalInode) and the
//                kernel asks again, since the text may shrink, which Store cannot express
//   rename NAME  note becomes NAME; both names' cached entries go (InvalEntry): the old one, and
//                the new one's cached absence
//   publish      snapshot/version leads to a new inode; one IncEpoch makes every cached name stale
//                at once, however many there are
// Each command is answered on standard output by one line, "ok" or "error: WHY", once the kernel
// has been told. --no-notify changes the tree without telling it: the stale caches stay visible.
// Ends on Ctrl-C, SIGTERM or umount; the end of standard input only ends the commands.
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/status.h"
#include "live_fs.h"
#include "ringfuse/ringfuse.h"

using namespace ringfuse;
using ringfuse::examples::LiveFs;

// NotFound means the kernel caches nothing of that node or name: nothing is stale.
absl::Status IgnoreUncached(absl::Status status) {
  return absl::IsNotFound(status) ? absl::OkStatus() : status;
}

// Changes the tree as `line` says, then tells the kernel through `notifier` (none: it is not
// told). Runs on the command thread, which handles no request, so the notifications may be sent
// synchronously (notifier.h).
absl::Status RunCommand(std::string_view line, LiveFs& fs, Notifier* notifier) {
  const std::string_view command = line.substr(0, line.find(' '));
  const std::string_view argument =
      command.size() < line.size() ? line.substr(command.size() + 1) : std::string_view();
  if (command == "bump") {
    const std::string bytes = fs.Bump();
    if (notifier) {
      return IgnoreUncached(notifier->Store(LiveFs::kCounter, 0, AsBytes(std::string_view(bytes))));
    }
  } else if (command == "say") {
    fs.Say(argument);
    if (notifier) return IgnoreUncached(notifier->InvalInode(LiveFs::kMessage, 0, 0));
  } else if (command == "rename") {
    absl::StatusOr<std::string> old_name = fs.RenameNote(argument);
    if (!old_name.ok()) return old_name.status();
    if (notifier) {
      absl::Status status = IgnoreUncached(notifier->InvalEntry(wire::kRootId, *old_name));
      if (!status.ok()) return status;
      return IgnoreUncached(notifier->InvalEntry(wire::kRootId, argument));
    }
  } else if (command == "publish") {
    fs.Publish();
    if (notifier) return notifier->IncEpoch();
  } else {
    return absl::InvalidArgumentError("unknown command '" + std::string(command) +
                                      "': bump, say TEXT, rename NAME or publish");
  }
  return absl::OkStatus();
}

// Reads commands from standard input until its end or `stop`. Polls with a timeout, because a
// blocking read could not be told to stop.
void ReadCommands(std::stop_token stop, LiveFs& fs, Notifier* notifier) {
  std::string pending;
  while (!stop.stop_requested()) {
    pollfd input{.fd = STDIN_FILENO, .events = POLLIN, .revents = 0};
    if (poll(&input, 1, 100) <= 0) continue;
    char chunk[4096];
    const ssize_t got = read(STDIN_FILENO, chunk, sizeof chunk);
    if (got <= 0) return;
    pending.append(chunk, static_cast<size_t>(got));
    for (size_t end; (end = pending.find('\n')) != std::string::npos; pending.erase(0, end + 1)) {
      const absl::Status status =
          RunCommand(std::string_view(pending).substr(0, end), fs, notifier);
      const std::string answer = status.ok() ? "ok" : "error: " + std::string(status.message());
      std::printf("%s\n", answer.c_str());
      std::fflush(stdout);
    }
  }
}

int main(int argc, char** argv) {
  const bool notify = !(argc == 3 && std::string_view(argv[1]) == "--no-notify");
  if (argc != (notify ? 2 : 3)) {
    std::fprintf(stderr, "usage: %s [--no-notify] MOUNTPOINT\n", argv[0]);
    return 2;
  }
  StopSignals signals;  // before any thread: SIGINT and SIGTERM unmount cleanly
  LiveFs fs;
  SessionOptions options;
  options.mount.mountpoint = argv[argc - 1];
  options.mount.fsname = "notify";
  options.mount.read_only = true;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Start(options, fs);
  if (!session.ok()) {
    std::fprintf(stderr, "notify: %s\n", session.status().ToString().c_str());
    return 1;
  }
  std::jthread commands(ReadCommands, std::ref(fs), notify ? &(*session)->notifier() : nullptr);
  signals.Wait(**session);
}
