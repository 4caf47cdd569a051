// Kernel passthrough (FUSE_PASSTHROUGH, 7.40): an OPEN answered with FOPEN_PASSTHROUGH and a
// registered backing file is read and written by the kernel itself, and the server sees neither
// READ nor WRITE for it.
#include <fcntl.h>
#include <unistd.h>

#include <mutex>
#include <optional>

#include "absl/strings/str_format.h"
#include "base/fd.h"
#include "tools/conform/check.h"
#include "tools/conform/context.h"
#include "tools/conform/fixture.h"

namespace ringfuse::conform {
namespace {

// MemFs whose OPENs of one node are answered with FOPEN_PASSTHROUGH and a backing file
// registered from `backing_fd`; the kernel allows one backing file per inode, so all opens share
// the first registration.
class BackedFs : public MemFs {
 public:
  BackedFs(BackingFiles& files, int backing_fd) : MemFs(Cached()), files_(files), fd_(backing_fd) {}
  void SetBackedNode(uint64_t nodeid) { backed_ = nodeid; }
  std::string failure() const {
    std::lock_guard lock(mutex_);
    return failure_;
  }

  void Open(const RequestContext& context, const op::Open& args, OpenReply reply) override {
    if (context.nodeid() != backed_) return MemFs::Open(context, args, std::move(reply));
    std::lock_guard lock(mutex_);
    if (!backing_) {
      absl::StatusOr<BackingFile> registered = files_.Open(fd_);
      if (!registered.ok()) {
        failure_ = registered.status().ToString();
        return reply.Error(EIO);
      }
      backing_ = std::move(*registered);
    }
    reply.Ok(MakeOpenOut(/*fh=*/0, wire::kFopenPassthrough, backing_->id()));
  }

 private:
  BackingFiles& files_;
  const int fd_;
  uint64_t backed_ = 0;
  mutable std::mutex mutex_;
  std::optional<BackingFile> backing_;
  std::string failure_;
};

void ReadAndWrite(CheckContext& context) {
  char backing_path[] = "/tmp/ringfuse-conform-backing-XXXXXX";
  const base::UniqueFd backing(::mkstemp(backing_path));
  ::unlink(backing_path);
  const std::string backing_bytes = KnownBytes(kFileSize, 'b');
  if (!context.Expect(backing.valid() &&
                          ::pwrite(backing.get(), backing_bytes.data(), kFileSize, 0) == kFileSize,
                      "a backing file in /tmp is written")) {
    return;
  }
  BackingFiles files;
  BackedFs fs(files, backing.get());
  fs.SetBackedNode(fs.AddFile(wire::kRootId, "f", KnownBytes(kFileSize, 'm')));
  SessionOptions options;
  options.init.flags |= wire::init_flag::kPassthrough;
  options.backing_files = &files;
  const std::unique_ptr<Mounted> mount = context.Mount(fs, options);
  if (!mount) return;
  const size_t mark = mount->log().Mark();
  const base::UniqueFd file(::open(mount->Path("f").c_str(), O_RDWR | O_CLOEXEC));
  context.Expect(file.valid(), "the open succeeds");
  std::string got(4096, '\0');
  const ssize_t read = ::pread(file.get(), got.data(), got.size(), 0);
  const std::string read_said = Said(read);
  const ssize_t written = ::pwrite(file.get(), "xyz", 3, 0);
  const std::string write_said = Said(written);
  char on_backing[3] = {};
  ::pread(backing.get(), on_backing, sizeof(on_backing), 0);
  mount->log().Settle();
  const size_t reads = mount->log().CountSince(mark, Opcode::kRead);
  const size_t writes = mount->log().CountSince(mark, Opcode::kWrite);
  if (!fs.failure().empty()) context.Evidence("registering the backing file: " + fs.failure());
  context.Evidence(absl::StrFormat("read %s, write %s; the server saw %d READ, %d WRITE", read_said,
                                   write_said, reads, writes));
  context.Expect(read == 4096 && got == backing_bytes.substr(0, 4096),
                 "the client reads the backing file's bytes, not the server's");
  context.Expect(written == 3 && std::string_view(on_backing, 3) == "xyz",
                 "the client's write lands in the backing file");
  context.Expect(reads == 0 && writes == 0, "the server sees no READ or WRITE");
}

}  // namespace

std::vector<Check> PassthroughChecks() {
  return {
      {.name = "passthrough.read_write",
       .summary = "FOPEN_PASSTHROUGH: the kernel reads and writes the backing file itself",
       .needs_flags = wire::init_flag::kPassthrough,
       .run = ReadAndWrite},
  };
}

}  // namespace ringfuse::conform
