#include "daemon/crash/kept_state.h"

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/fd.h"
#include "daemon/crash/kept_memory.h"
#include "ringfuse/log.h"

namespace ringfuse::daemon {
namespace {

// The keeper's fds by their memfds' names. Every fd is owned first, so that each is closed
// whatever happens; one that is no memfd is closed at once. A name given twice is DataLoss: no
// daemon kept two journals of one kind.
using KeptByName = absl::flat_hash_map<std::string, base::UniqueFd>;

absl::StatusOr<KeptByName> ByName(const std::vector<int>& fds) {
  std::vector<base::UniqueFd> owned(fds.begin(), fds.end());
  KeptByName kept;
  for (base::UniqueFd& fd : owned) {
    const std::optional<std::string> name = MemfdName(fd.get());
    if (!name.has_value()) continue;
    if (!kept.emplace(*name, std::move(fd)).second) {
      return absl::DataLossError(absl::StrCat("the keeper holds two journals named ", *name));
    }
  }
  return kept;
}

// The fd of journal `name`, taken out of `kept`; an invalid fd when there is none.
base::UniqueFd Take(KeptByName& kept, const char* name) {
  const auto found = kept.find(name);
  if (found == kept.end()) return base::UniqueFd();
  base::UniqueFd fd = std::move(found->second);
  kept.erase(found);
  return fd;
}

}  // namespace

absl::StatusOr<std::vector<int>> KeptState::Journal(PassthroughFs& fs) {
  absl::StatusOr<std::unique_ptr<OpenFileJournal>> files = OpenFileJournal::Create();
  if (!files.ok()) return files.status();
  absl::StatusOr<std::unique_ptr<NodeJournal>> nodes = NodeJournal::Create();
  if (!nodes.ok()) return nodes.status();
  absl::StatusOr<std::unique_ptr<ChangeJournal>> changes = ChangeJournal::Create();
  if (!changes.ok()) return changes.status();
  open_files_ = std::move(*files);
  nodes_ = std::move(*nodes);
  changes_ = std::move(*changes);
  fs.KeepOpenFilesIn(open_files_.get());
  fs.inodes().RecordNodesIn(nodes_.get());
  fs.KeepChangesIn(changes_.get(), {});
  return std::vector<int>{open_files_->fd(), nodes_->fd(), changes_->fd()};
}

absl::StatusOr<Recovered> KeptState::Recover(const CrashRecovery& crash, PassthroughFs& fs) {
  absl::StatusOr<KeptByName> kept = ByName(crash.fds);
  if (!kept.ok()) return kept.status();
  if (absl::Status continued = fs.ContinueAfterCrash(crash.incarnation); !continued.ok()) {
    return continued;
  }
  Recovered recovered;
  if (open_files_ == nullptr) return recovered;  // not journaled: every name looked up again

  if (base::UniqueFd fd = Take(*kept, ChangeJournal::kMemfdName); fd.valid()) {
    absl::StatusOr<std::unique_ptr<ChangeJournal>> changes = ChangeJournal::Adopt(std::move(fd));
    if (!changes.ok()) return changes.status();
    fs.KeepChangesIn(changes->get(), (*changes)->Recover());
    changes_ = std::move(*changes);
  } else {
    fs.KeepChangesIn(nullptr, {});
    changes_.reset();
    LogLine(LogLevel::kWarning,
            "the keeper holds no change journal (an older ringfused started it): a change "
            "the dead daemon made and did not answer is made again");
  }

  base::UniqueFd nodes_fd = Take(*kept, NodeJournal::kMemfdName);
  base::UniqueFd files_fd = Take(*kept, OpenFileJournal::kMemfdName);
  if (!nodes_fd.valid() || !files_fd.valid()) {
    return absl::DataLossError("the keeper did not keep the journals");
  }
  absl::StatusOr<std::unique_ptr<NodeJournal>> nodes = NodeJournal::Adopt(std::move(nodes_fd));
  if (!nodes.ok()) return nodes.status();
  NodeJournal::Recovery recovery = (*nodes)->Recover();
  const size_t recorded = recovery.nodes.size();
  if (absl::Status restored = fs.inodes().RestoreRecorded(std::move(recovery.nodes));
      !restored.ok()) {
    return restored;
  }
  fs.inodes().RecordNodesIn(nodes->get());  // before the journal it replaces goes
  nodes_ = std::move(*nodes);
  recovered.names_still_valid = recovery.complete;

  absl::StatusOr<std::unique_ptr<OpenFileJournal>> files =
      OpenFileJournal::Adopt(std::move(files_fd));
  if (!files.ok()) return files.status();
  fs.KeepOpenFilesIn(files->get());
  open_files_ = std::move(*files);
  const size_t reopened = fs.ReopenAfterCrash(*open_files_);
  LogLine(LogLevel::kInfo,
          absl::StrCat("recovered ", recorded, " nodes",
                       recovery.complete ? "" : " (not all: every name is looked up again)",
                       " and reopened ", reopened, " files open at the crash"));
  return recovered;
}

}  // namespace ringfuse::daemon
