#include "daemon/inodes/fd_room.h"

#include <cerrno>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace ringfuse::daemon {
namespace {

// Fds asked of the lenders per EMFILE, and how many times an open is made again: enough for a
// burst of opens from every queue thread, few enough that one EMFILE does not empty the table.
constexpr size_t kFdsPerGiveBack = 32;
constexpr int kTries = 4;

struct Lenders {
  absl::Mutex mutex;
  std::vector<std::pair<FdLender, void*>> lenders ABSL_GUARDED_BY(mutex);
};

Lenders& AllLenders() {
  static Lenders* const lenders = new Lenders;  // never destroyed: lenders may outlive main
  return *lenders;
}

// Taken only after an EMFILE, never on a request that found its fd.
size_t GiveBack(size_t count) {
  Lenders& all = AllLenders();
  absl::MutexLock lock(&all.mutex);
  size_t given = 0;
  for (const auto& [give_back, lender] : all.lenders) {
    if (given >= count) break;
    given += give_back(lender, count - given);
  }
  return given;
}

}  // namespace

void LendFds(FdLender give_back, void* lender) {
  Lenders& all = AllLenders();
  absl::MutexLock lock(&all.mutex);
  all.lenders.emplace_back(give_back, lender);
}

void StopLendingFds(void* lender) {
  Lenders& all = AllLenders();
  absl::MutexLock lock(&all.mutex);
  std::erase_if(all.lenders, [lender](const auto& entry) { return entry.second == lender; });
}

base::ErrnoOr<base::UniqueFd> OpenMakingRoom(
    absl::FunctionRef<base::ErrnoOr<base::UniqueFd>()> open) {
  base::ErrnoOr<base::UniqueFd> fd = open();
  for (int retry = 1; retry < kTries && !fd.ok() && fd.error() == base::Errno(EMFILE); ++retry) {
    if (GiveBack(kFdsPerGiveBack) == 0) break;
    fd = open();
  }
  return fd;
}

}  // namespace ringfuse::daemon
