#include "tools/stress_loop.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ringfuse/wire.h"
#include "tools/stress_tree.h"

namespace ringfuse::tools {
namespace {

constexpr uint64_t kRoot = 1;

template <typename T>
ConstBytes BytesOf(const T& value) {
  return std::as_bytes(std::span(&value, 1));
}

// A fixed-size reply read as its struct.
template <typename T>
absl::StatusOr<T> Decode(const absl::StatusOr<ConstBytes>& body, absl::string_view what) {
  if (!body.ok()) return body.status();
  if (body->size() != sizeof(T)) {
    return absl::InternalError(
        absl::StrCat(what, ": a reply of ", body->size(), " bytes, not ", sizeof(T)));
  }
  T value;
  std::memcpy(&value, body->data(), sizeof(T));
  return value;
}

absl::Status CheckAttr(const wire::Attr& attr, mode_t type, int index, absl::string_view what) {
  if ((attr.mode & S_IFMT) != type) {
    return absl::InternalError(absl::StrCat(what, ": mode ", attr.mode, " is not the file type's"));
  }
  if (type == S_IFREG && attr.size != StressTree::FileSize(index)) {
    return absl::InternalError(absl::StrCat(what, " of ", StressTree::FileName(index), ": size ",
                                            attr.size, ", not ", StressTree::FileSize(index)));
  }
  return absl::OkStatus();
}

// The node id of `name` in `parent`, which must be of `type` (and, a file, file `index`).
absl::StatusOr<uint64_t> Lookup(StressCaller& caller, uint64_t parent, absl::string_view name,
                                mode_t type, int index) {
  absl::StatusOr<wire::EntryOut> entry =
      Decode<wire::EntryOut>(caller.Call(Opcode::kLookup, parent, {}, name), "LOOKUP");
  absl::Status checked = entry.status();
  if (checked.ok() && entry->nodeid == 0) checked = absl::InternalError("a negative entry");
  if (checked.ok()) checked = CheckAttr(entry->attr, type, index, "LOOKUP");
  if (!checked.ok()) return absl::InternalError(absl::StrCat(name, ": ", checked.message()));
  return entry->nodeid;
}

absl::Status Getattr(StressCaller& caller, uint64_t nodeid, int index) {
  const wire::GetattrIn in{};
  absl::StatusOr<wire::AttrOut> out =
      Decode<wire::AttrOut>(caller.Call(Opcode::kGetattr, nodeid, BytesOf(in)), "GETATTR");
  if (!out.ok()) return out.status();
  return CheckAttr(out->attr, S_IFREG, index, "GETATTR");
}

// Opens file `index`, reads it whole and releases it.
absl::Status Read(StressCaller& caller, uint64_t nodeid, int index) {
  const wire::OpenIn open{.flags = O_RDONLY, .open_flags = 0};
  absl::StatusOr<wire::OpenOut> opened =
      Decode<wire::OpenOut>(caller.Call(Opcode::kOpen, nodeid, BytesOf(open)), "OPEN");
  if (!opened.ok()) return opened.status();
  wire::ReadIn read{};
  read.fh = opened->fh;
  read.size = StressTree::kLargestFile;
  read.flags = O_RDONLY;
  absl::StatusOr<ConstBytes> data = caller.Call(Opcode::kRead, nodeid, BytesOf(read));
  if (!data.ok()) return data.status();
  if (!StressTree::HoldsContents(index, *data)) {
    return absl::InternalError(absl::StrCat("READ of ", StressTree::FileName(index), ": ",
                                            data->size(), " bytes that are not the file's"));
  }
  wire::ReleaseIn release{};
  release.fh = opened->fh;
  release.flags = O_RDONLY;
  absl::StatusOr<ConstBytes> released = caller.Call(Opcode::kRelease, nodeid, BytesOf(release));
  if (!released.ok()) return released.status();
  if (released->empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("RELEASE: a reply of ", released->size(), " bytes"));
}

absl::Status Forget(StressCaller& caller, uint64_t nodeid) {
  const wire::ForgetIn forget{.nlookup = 1};
  return caller.Tell(Opcode::kForget, nodeid, BytesOf(forget));
}

absl::Status VisitFile(StressCaller& caller, int index) {
  absl::StatusOr<uint64_t> dir = Lookup(caller, kRoot, StressTree::kDir, S_IFDIR, index);
  if (!dir.ok()) return dir.status();
  absl::StatusOr<uint64_t> file = Lookup(caller, *dir, StressTree::FileName(index), S_IFREG, index);
  if (!file.ok()) return file.status();
  absl::Status done = Getattr(caller, *file, index);
  if (done.ok()) done = Read(caller, *file, index);
  if (done.ok()) done = Forget(caller, *file);
  if (done.ok()) done = Forget(caller, *dir);
  return done;
}

}  // namespace

absl::Status RunStressLoop(StressCaller& caller, const LoopPlan& plan, std::atomic<bool>& stop) {
  int index = static_cast<int>(static_cast<int64_t>(plan.files) * plan.thread / plan.threads);
  while (!stop.load(std::memory_order_relaxed)) {
    if (absl::Status visited = VisitFile(caller, index); !visited.ok()) {
      stop.store(true, std::memory_order_relaxed);
      return visited;
    }
    index = (index + 1) % plan.files;
  }
  return absl::OkStatus();
}

}  // namespace ringfuse::tools
