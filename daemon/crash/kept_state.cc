#include "daemon/crash/kept_state.h"

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/fd.h"
#include "daemon/crash/incarnation.h"
#include "daemon/crash/kept_memory.h"
#include "daemon/crash/reopen_after_crash.h"
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
  const PassthroughFs::Parts parts = fs.parts();
  parts.open.KeepIn(open_files_.get());
  parts.inodes.RecordNodesIn(nodes_.get());
  parts.changes_once.KeepIn(changes_.get(), {});
  return std::vector<int>{open_files_->fd(), nodes_->fd(), changes_->fd()};
}

absl::StatusOr<Recovered> KeptState::Recover(const CrashRecovery& crash, PassthroughFs& fs) {
  absl::StatusOr<KeptByName> kept = ByName(crash.fds);
  if (!kept.ok()) return kept.status();
  if (absl::Status continued = ContinueAfterCrash(fs, crash.incarnation); !continued.ok()) {
    return continued;
  }
  Recovered recovered;
  if (open_files_ == nullptr) return recovered;  // not journaled: every name looked up again
  const PassthroughFs::Parts parts = fs.parts();
  if (absl::Status changes = AdoptChanges(Take(*kept, ChangeJournal::kMemfdName), parts);
      !changes.ok()) {
    return changes;
  }
  base::UniqueFd nodes_fd = Take(*kept, NodeJournal::kMemfdName);
  base::UniqueFd files_fd = Take(*kept, OpenFileJournal::kMemfdName);
  if (!nodes_fd.valid() || !files_fd.valid()) {
    return absl::DataLossError("the keeper did not keep the journals");
  }
  absl::StatusOr<NodesAdopted> nodes = AdoptNodes(std::move(nodes_fd), parts);
  if (!nodes.ok()) return nodes.status();
  recovered.names_still_valid = nodes->complete;
  absl::StatusOr<size_t> reopened = AdoptOpenFiles(std::move(files_fd), parts);
  if (!reopened.ok()) return reopened.status();
  LogLine(LogLevel::kInfo,
          absl::StrCat("recovered ", nodes->recorded, " nodes",
                       nodes->complete ? "" : " (not all: every name is looked up again)",
                       " and reopened ", *reopened, " files open at the crash"));
  return recovered;
}

// A missing change journal (a keeper an older ringfused started) is no loss of data: only a
// change the dead daemon made and did not answer is made again.
absl::Status KeptState::AdoptChanges(base::UniqueFd fd, const PassthroughFs::Parts& parts) {
  if (!fd.valid()) {
    parts.changes_once.KeepIn(nullptr, {});
    changes_.reset();
    LogLine(LogLevel::kWarning,
            "the keeper holds no change journal (an older ringfused started it): a change "
            "the dead daemon made and did not answer is made again");
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<ChangeJournal>> changes = ChangeJournal::Adopt(std::move(fd));
  if (!changes.ok()) return changes.status();
  parts.changes_once.KeepIn(changes->get(), (*changes)->Recover());
  changes_ = std::move(*changes);
  return absl::OkStatus();
}

absl::StatusOr<KeptState::NodesAdopted> KeptState::AdoptNodes(base::UniqueFd fd,
                                                              const PassthroughFs::Parts& parts) {
  absl::StatusOr<std::unique_ptr<NodeJournal>> nodes = NodeJournal::Adopt(std::move(fd));
  if (!nodes.ok()) return nodes.status();
  NodeJournal::Recovery recovery = (*nodes)->Recover();
  const NodesAdopted adopted{recovery.nodes.size(), recovery.complete};
  if (absl::Status restored = parts.inodes.RestoreRecorded(std::move(recovery.nodes));
      !restored.ok()) {
    return restored;
  }
  parts.inodes.RecordNodesIn(nodes->get());  // before the journal it replaces goes
  nodes_ = std::move(*nodes);
  return adopted;
}

absl::StatusOr<size_t> KeptState::AdoptOpenFiles(base::UniqueFd fd,
                                                 const PassthroughFs::Parts& parts) {
  absl::StatusOr<std::unique_ptr<OpenFileJournal>> files = OpenFileJournal::Adopt(std::move(fd));
  if (!files.ok()) return files.status();
  parts.open.KeepIn(files->get());
  open_files_ = std::move(*files);
  return ReopenAfterCrash(*open_files_, parts.inodes, parts.open);
}

}  // namespace ringfuse::daemon
