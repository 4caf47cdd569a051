// memfs MOUNTPOINT: mounts an empty in-memory filesystem (memfs.h) read-write, as root or through
// fusermount3 as a user; ends on Ctrl-C, SIGTERM or umount, and everything in it is gone.
#include <cstdio>
#include <memory>

#include "memfs.h"
#include "ringfuse/ringfuse.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MOUNTPOINT\n", argv[0]);
    return 2;
  }
  ringfuse::StopSignals signals;  // before any thread: SIGINT and SIGTERM unmount cleanly
  ringfuse::examples::MemFs fs;
  ringfuse::SessionOptions options;
  options.mount.mountpoint = argv[1];
  options.mount.fsname = "memfs";
  options.mount.subtype = "memfs";
  // MemFs serves READDIRPLUS, which a session asks for only when told.
  options.init.flags |=
      ringfuse::wire::init_flag::kDoReaddirplus | ringfuse::wire::init_flag::kReaddirplusAuto;
  absl::StatusOr<std::unique_ptr<ringfuse::Session>> session =
      ringfuse::Session::Start(options, fs);
  if (!session.ok()) {
    std::fprintf(stderr, "memfs: %s\n", session.status().ToString().c_str());
    return 1;
  }
  signals.Wait(**session);
}
