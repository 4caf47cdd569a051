// hello: a read-only filesystem holding one file. Usage: hello MOUNTPOINT (as root, or through
// fusermount3 as a user); ends on Ctrl-C, SIGTERM or umount.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdio>
#include <string_view>

#include "ringfuse/ringfuse.h"

using namespace ringfuse;

constexpr uint64_t kFile = 2;
constexpr std::string_view kName = "hello", kText = "Hello, world!\n";

wire::Attr AttrOf(uint64_t node) {
  wire::Attr attr{};
  attr.ino = node;
  attr.mode = node == kFile ? S_IFREG | 0444 : S_IFDIR | 0555;
  attr.nlink = node == kFile ? 1 : 2;
  attr.size = node == kFile ? kText.size() : 0;
  return attr;
}

class HelloFs : public Handler {
  void Lookup(const RequestContext& context, const op::Lookup& args, EntryReply reply) override {
    if (context.nodeid() != wire::kRootId || args.name != kName) return reply.Error(ENOENT);
    reply.Ok(MakeEntry(kFile, 0, AttrOf(kFile), Timeout{1}, Timeout{1}));
  }
  void Getattr(const RequestContext& context, const op::Getattr&, AttrReply reply) override {
    reply.Ok(MakeAttrOut(AttrOf(context.nodeid()), Timeout{1}));
  }
  void Open(const RequestContext&, const op::Open& args, OpenReply reply) override {
    if ((args.flags() & O_ACCMODE) != O_RDONLY) return reply.Error(EACCES);
    reply.Ok(MakeOpenOut(0, wire::kFopenKeepCache));
  }
  void Read(const RequestContext&, const op::Read& args, DataReply reply) override {
    reply.Ok(AsBytes(kText.substr(std::min<uint64_t>(args.offset(), kText.size()), args.size())));
  }
  void Opendir(const RequestContext&, const op::Opendir&, OpenReply reply) override {
    reply.Ok(MakeOpenOut(0, 0));
  }
  void Readdir(const RequestContext&, const op::Readdir&, DirReply reply) override {
    // Entries are numbered by their place in the listing; the kernel continues from offset().
    const std::string_view names[] = {".", "..", kName};
    for (uint64_t i = reply.offset(); i < 3; ++i) {
      if (!reply.Add(names[i], i < 2 ? wire::kRootId : kFile, i < 2 ? DT_DIR : DT_REG)) break;
    }
    reply.Ok();
  }
};

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MOUNTPOINT\n", argv[0]);
    return 2;
  }
  StopSignals signals;  // before any thread: SIGINT and SIGTERM unmount cleanly
  HelloFs fs;
  SessionOptions options;
  options.mount.mountpoint = argv[1];
  options.mount.fsname = "hello";
  options.mount.read_only = true;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Start(options, fs);
  if (!session.ok()) {
    std::fprintf(stderr, "hello: %s\n", session.status().ToString().c_str());
    return 1;
  }
  signals.Wait(**session);
}
