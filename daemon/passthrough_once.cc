// PassthroughFs: changes made once across crashes (change_journal.h).
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>

#include "daemon/passthrough_fs.h"
#include "daemon/test_hooks.h"
#include "ringfuse/wire.h"

namespace ringfuse::daemon {

int64_t PassthroughFs::ExecuteOnce(const RequestContext& context, std::string_view subject,
                                   absl::FunctionRef<uint64_t()> evidence,
                                   absl::FunctionRef<int64_t()> execute, Replay replay) {
  if (changes_ == nullptr) return execute();
  const uint64_t unique = context.header.unique & ~wire::kUniqueResend;
  const auto opcode = static_cast<Opcode>(context.header.opcode);
  const ChangeJournal::Outcome* earlier = nullptr;
  if ((context.header.unique & wire::kUniqueResend) != 0) {
    // A record of another operation under the same unique is no record of this one.
    if (auto found = earlier_changes_.find(unique);
        found != earlier_changes_.end() && found->second.opcode == opcode) {
      earlier = &found->second;
    }
  }
  // A replay is recorded too, with what the first record said: a crash before its reply has the
  // request sent once more.
  const size_t record =
      changes_->Begin(unique, opcode, earlier != nullptr ? earlier->evidence : evidence());
  HangInChangeIfTestAsks("begun", subject);
  std::optional<int64_t> result;
  if (earlier != nullptr) result = replay(*earlier);
  if (!result.has_value()) result = execute();
  HangInChangeIfTestAsks("made", subject);
  changes_->Done(record, *result);
  HangInChangeIfTestAsks("recorded", subject);
  return *result;
}

// A recorded result is what a backing call gave: a count or fd, or minus an errno (at most 4095,
// as the kernel's). Any other is no daemon's record, and negated it would overflow: EIO.
std::optional<int64_t> PassthroughFs::ReplayOf(const ChangeJournal::Outcome& earlier,
                                               absl::FunctionRef<bool(uint64_t evidence)> made,
                                               int64_t made_result) {
  constexpr int64_t kLowestErrno = -4095;
  if (earlier.done) return earlier.result >= kLowestErrno ? earlier.result : -EIO;
  if (made(earlier.evidence)) return made_result;
  return std::nullopt;
}

uint64_t PassthroughFs::InodeNamed(int dir_fd, const char* name) {
  struct stat st;
  if (::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) return st.st_ino;
  return errno == ENOENT ? 0 : kUnknownInode;
}

bool PassthroughFs::NameAdded(int dir_fd, const char* name, uint64_t before, uid_t maker) {
  if (before != 0) return false;
  struct stat st;
  return ::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid == maker;
}

bool PassthroughFs::NameRemoved(int dir_fd, const char* name, uint64_t before) {
  if (before == 0 || before == kUnknownInode) return false;
  const uint64_t now = InodeNamed(dir_fd, name);
  return now != before && now != kUnknownInode;
}

}  // namespace ringfuse::daemon
