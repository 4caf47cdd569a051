// How the kernel treats bad replies, written straight to /dev/fuse past the library: which write
// it refuses and with what errno, what the client then sees, and that the connection survives.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/fd.h"
#include "tools/conform/check.h"
#include "tools/conform/context.h"
#include "tools/conform/fixture.h"

namespace ringfuse::conform {
namespace {

// Writes a reply header (and `body_bytes` of zeros after it) to the mount's /dev/fuse; returns
// "ok" or the errno's name.
std::string WriteRaw(Mounted& mount, uint32_t len, int32_t error, uint64_t unique,
                     size_t body_bytes = 0) {
  std::string message(sizeof(wire::OutHeader) + body_bytes, '\0');
  const wire::OutHeader header{len, error, unique};
  std::memcpy(message.data(), &header, sizeof(header));
  return Said(::write(mount.session().dev_fd(), message.data(), message.size()));
}

// After a bad reply: the connection still serves a new request.
void ExpectConnectionServes(CheckContext& context, Mounted& mount) {
  struct stat st {};
  context.Expect(::stat(mount.Path("dir").c_str(), &st) == 0 && S_ISDIR(st.st_mode),
                 "the connection survives: a stat afterwards is answered");
}

void UnknownUnique(CheckContext& context) {
  MemFs fs(Uncached());
  Populate(fs);
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return;
  const std::string said = WriteRaw(*mount, sizeof(wire::OutHeader), 0, 0x7fff000000000001);
  context.Evidence(absl::StrCat("a reply to a unique nobody sent: ", said));
  context.Expect(said == "ENOENT", "the write fails with ENOENT");
  ExpectConnectionServes(context, *mount);
}

void WrongLength(CheckContext& context) {
  MemFs fs(Uncached());
  Populate(fs);
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return;
  const std::string longer = WriteRaw(*mount, sizeof(wire::OutHeader) + 8, 0, 2);
  const std::string shorter = WriteRaw(*mount, sizeof(wire::OutHeader) - 4, 0, 2);
  context.Evidence(
      absl::StrFormat("len 8 more than written: %s; len less than a header: %s", longer, shorter));
  context.Expect(longer == "EINVAL", "a header whose len exceeds the write fails with EINVAL");
  context.Expect(shorter == "EINVAL", "a header whose len is short fails with EINVAL");
  ExpectConnectionServes(context, *mount);
}

// Holds a READ of "file" (DIRECT_IO) in flight, calls `misbehave` with its unique, releases it,
// and returns what the client's read got.
std::string WithReadInFlight(CheckContext& context, Mounted& mount, MemFs& fs,
                             const std::function<void(uint64_t unique)>& misbehave) {
  Gate gate(fs, Opcode::kRead, std::chrono::seconds(10));
  const size_t mark = mount.log().Mark();
  std::future<std::string> read =
      std::async(std::launch::async, [&] { return ReadAt(mount.Path("file"), 16); });
  uint64_t unique = 0;
  if (mount.log().WaitFor(mark, Opcode::kRead)) {
    for (const RequestLog::Entry& entry : mount.log().Since(mark)) {
      if (entry.opcode == static_cast<uint32_t>(Opcode::kRead)) unique = entry.unique;
    }
  }
  context.Expect(unique != 0, "the client's read sends READ");
  if (unique != 0) misbehave(unique);
  gate.Release();
  return read.get();
}

void ErrorOutOfRange(CheckContext& context) {
  MemFs fs(Uncached(wire::kFopenDirectIo));
  Populate(fs);
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return;
  std::string said_5000, said_positive;
  const std::string got = WithReadInFlight(context, *mount, fs, [&](uint64_t unique) {
    said_5000 = WriteRaw(*mount, sizeof(wire::OutHeader), -5000, unique);
    said_positive = WriteRaw(*mount, sizeof(wire::OutHeader), 5, unique);
  });
  context.Evidence(absl::StrFormat("error -5000: %s; error +5: %s", said_5000, said_positive));
  context.Expect(said_5000 == "EINVAL", "an errno beyond the kernel's range is refused (EINVAL)");
  context.Expect(said_positive == "EINVAL", "a positive error is refused (EINVAL)");
  context.Expect(got == KnownBytes(16, 'a'),
                 "the request stays pending: the client gets the server's real answer");
  ExpectConnectionServes(context, *mount);
}

void ReplyToForget(CheckContext& context) {
  MemFs fs(Cached());
  Populate(fs);
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return;
  InodeOf(mount->Path("dir"));
  const size_t mark = mount->log().Mark();
  // Dropping the unused dentry evicts its inode, which the kernel then FORGETs.
  context.Expect(mount->notifier().InvalEntry(wire::kRootId, "dir").ok(),
                 "INVAL_ENTRY is accepted");
  const bool forgot = mount->log().WaitFor(mark, Opcode::kForget, std::chrono::seconds(2)) ||
                      mount->log().WaitFor(mark, Opcode::kBatchForget, std::chrono::seconds(1));
  context.Expect(forgot, "the kernel FORGETs the evicted node");
  for (const RequestLog::Entry& entry : mount->log().Since(mark)) {
    if (entry.opcode != static_cast<uint32_t>(Opcode::kForget) &&
        entry.opcode != static_cast<uint32_t>(Opcode::kBatchForget)) {
      continue;
    }
    const std::string said = WriteRaw(*mount, sizeof(wire::OutHeader), 0, entry.unique);
    context.Evidence(absl::StrFormat("a reply to %s: %s", entry.line, said));
    context.Expect(said == "ENOENT", "a reply to a FORGET fails with ENOENT");
  }
  ExpectConnectionServes(context, *mount);
}

// MemFs whose READs answer at most 100 bytes, whatever the file's size.
class ShortReadFs : public MemFs {
 public:
  using MemFs::MemFs;
  void Read(const RequestContext& context, const op::Read& args, DataReply reply) override {
    const std::string contents = Contents(context.nodeid()).value_or("");
    const std::string part = contents.substr(0, std::min<size_t>(100, contents.size()));
    (void)args;
    reply.Ok(ConstBytes(reinterpret_cast<const std::byte*>(part.data()), part.size()));
  }
};

void ShortRead(CheckContext& context) {
  ShortReadFs fs(Cached());
  Populate(fs);
  const std::unique_ptr<Mounted> mount = context.Mount(fs);
  if (!mount) return;
  const std::string got = ReadAt(mount->Path("file"), 4096);
  const std::string past = ReadAt(mount->Path("file"), 4096, 100);
  struct stat st {};
  ::stat(mount->Path("file").c_str(), &st);
  context.Evidence(absl::StrFormat(
      "asked 4096 of an 8192-byte file, answered 100: the client read %d bytes; from offset 100 "
      "it reads %d bytes%s; the size it sees afterwards: %d",
      got.size(), past.size(),
      past.find_first_not_of('\0') == std::string::npos && !past.empty() ? ", all zero" : "",
      st.st_size));
  context.Expect(got == KnownBytes(100, 'a'), "the client reads what the server answered");
  context.Expect(past.empty() || past.find_first_not_of('\0') == std::string::npos,
                 "past the short answer the client reads nothing the server did not send");
  ExpectConnectionServes(context, *mount);
}

}  // namespace

std::vector<Check> BadReplyChecks() {
  return {
      {.name = "bad_reply.error_out_of_range",
       .summary = "an errno beyond the kernel's range is refused; the request stays pending",
       .run = ErrorOutOfRange},
      {.name = "bad_reply.reply_to_forget",
       .summary = "a reply to a FORGET is refused with ENOENT",
       .run = ReplyToForget},
      {.name = "bad_reply.short_read",
       .summary = "a READ answered short gives the client that much and nothing invented",
       .run = ShortRead},
      {.name = "bad_reply.unknown_unique",
       .summary = "a reply to a unique nobody sent is refused with ENOENT",
       .run = UnknownUnique},
      {.name = "bad_reply.wrong_length",
       .summary = "a reply whose header length disagrees with the write is refused",
       .run = WrongLength},
  };
}

}  // namespace ringfuse::conform
