#include "daemon/crash/changes_once.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "daemon/test_hooks.h"
#include "ringfuse/wire.h"

namespace ringfuse::daemon {
namespace {

constexpr uint64_t kUnknown = ~uint64_t{0};  // evidence that could not be read

// The inode `name` in `dir_fd` names, 0 for none (ENOENT), kUnknown when that cannot be told.
uint64_t InodeNamed(int dir_fd, const char* name) {
  struct stat st;
  if (::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) return st.st_ino;
  return errno == ENOENT ? 0 : kUnknown;
}

uint64_t SizeOf(int fd) {
  struct stat st;
  return ::fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : kUnknown;
}

uint64_t NameBefore(const ChangePlace& place) { return InodeNamed(place.dir_fd, place.name); }

uint64_t SizeBefore(const ChangePlace& place) { return SizeOf(place.file_fd); }

std::optional<uint64_t> NameAdded(const ChangePlace& place, uint64_t before) {
  struct stat st;
  if (before != 0 || ::fstatat(place.dir_fd, place.name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      st.st_uid != place.maker) {
    return std::nullopt;
  }
  return 0;
}

std::optional<uint64_t> NameRemoved(const ChangePlace& place, uint64_t before) {
  if (before == 0 || before == kUnknown) return std::nullopt;
  const uint64_t now = InodeNamed(place.dir_fd, place.name);
  if (now == before || now == kUnknown) return std::nullopt;
  return 0;
}

std::optional<uint64_t> NameMoved(const ChangePlace& place, uint64_t moved) {
  if (moved == 0 || moved == kUnknown) return std::nullopt;
  if (InodeNamed(place.to_dir_fd, place.to_name) != moved) return std::nullopt;
  return 0;
}

std::optional<uint64_t> Appended(const ChangePlace& place, uint64_t before) {
  const uint64_t now = SizeOf(place.file_fd);
  if (before == kUnknown || now == kUnknown || now <= before) return std::nullopt;
  return std::min(now - before, place.length);
}

// Each kind's evidence, in ChangeKind's order: what is recorded before the change, and, after a
// crash in its middle, its result if that finds it made.
struct Evidence {
  uint64_t (*before)(const ChangePlace& place);
  std::optional<uint64_t> (*made)(const ChangePlace& place, uint64_t before);
};
constexpr Evidence kEvidence[] = {
    {NameBefore, NameAdded},    // kNameAdded
    {NameBefore, NameRemoved},  // kNameRemoved
    {NameBefore, NameMoved},    // kNameMoved
    {SizeBefore, Appended},     // kAppended
};
static_assert(std::size(kEvidence) == static_cast<size_t>(ChangeKind::kAppended) + 1);

const Evidence& EvidenceOf(ChangeKind kind) { return kEvidence[static_cast<size_t>(kind)]; }

// A result is recorded as a count or fh, or minus an errno (at most 4095, as the kernel's). Any
// other is no daemon's record, and negated it would overflow: EIO.
constexpr int64_t kLowestErrno = -4095;

int64_t ToRecord(const ChangeResult& result) {
  return result.ok() ? static_cast<int64_t>(*result) : -int64_t{result.error().value()};
}

ChangeResult Recorded(const ChangeJournal::Outcome& earlier) {
  if (earlier.result >= 0) return static_cast<uint64_t>(earlier.result);
  return base::Errno(earlier.result >= kLowestErrno ? static_cast<int>(-earlier.result) : EIO);
}

}  // namespace

const ChangeJournal::Outcome* ChangesOnce::Earlier(const RequestContext& context) const {
  if ((context.header.unique & wire::kUniqueResend) == 0) return nullptr;
  const auto found = earlier_.find(context.header.unique & ~wire::kUniqueResend);
  // A record of another operation under the same unique is no record of this one.
  if (found == earlier_.end() ||
      found->second.opcode != static_cast<Opcode>(context.header.opcode)) {
    return nullptr;
  }
  return &found->second;
}

ChangeResult ChangesOnce::Record(
    const RequestContext& context, std::string_view subject, ChangeKind kind,
    const ChangePlace& place,
    absl::FunctionRef<ChangeResult(const ChangeJournal::Outcome* earlier)> result) {
  const ChangeJournal::Outcome* earlier = Earlier(context);
  // A replay is recorded too, with what the first record said: a crash before its reply has the
  // request sent once more.
  const size_t record = journal_->Begin(
      context.header.unique & ~wire::kUniqueResend, static_cast<Opcode>(context.header.opcode),
      earlier != nullptr ? earlier->evidence : EvidenceOf(kind).before(place));
  HangInChangeIfTestAsks("begun", subject);
  ChangeResult made = result(earlier);
  HangInChangeIfTestAsks("made", subject);
  journal_->Done(record, ToRecord(made));
  HangInChangeIfTestAsks("recorded", subject);
  return made;
}

ChangeResult ChangesOnce::Make(const RequestContext& context, std::string_view subject,
                               ChangeKind kind, const ChangePlace& place,
                               absl::FunctionRef<ChangeResult()> execute) {
  if (journal_ == nullptr) return execute();
  return Record(
      context, subject, kind, place, [&](const ChangeJournal::Outcome* earlier) -> ChangeResult {
        if (earlier == nullptr) return execute();
        if (earlier->done) return Recorded(*earlier);
        if (const std::optional<uint64_t> made = EvidenceOf(kind).made(place, earlier->evidence)) {
          return *made;
        }
        return execute();
      });
}

ChangeResult ChangesOnce::Make(const RequestContext& context, std::string_view subject,
                               ChangeKind kind, const ChangePlace& place,
                               absl::FunctionRef<ChangeResult()> execute, MadeBefore made_before) {
  if (journal_ == nullptr) return execute();
  return Record(context, subject, kind, place,
                [&](const ChangeJournal::Outcome* earlier) -> ChangeResult {
                  if (earlier == nullptr) return execute();
                  if (earlier->done && earlier->result < 0) return Recorded(*earlier);
                  if (!earlier->done && !EvidenceOf(kind).made(place, earlier->evidence))
                    return execute();
                  return made_before(*earlier);
                });
}

}  // namespace ringfuse::daemon
