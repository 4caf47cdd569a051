// What a kept daemon keeps, taken back by the next one: the journals are known by their memfds'
// names, whatever order the keeper gives them in and whatever else it gives.
#include "daemon/crash/kept_state.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "daemon/crash/kept_memory.h"
#include "gtest/gtest.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::WriteFile;

class KeptStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(top_.path().empty());
    WriteFile(top_.path() + "/file", "kept\n");
    dead_ = MakeFs();
    absl::StatusOr<std::vector<int>> kept = dead_state_.Journal(*dead_);
    ASSERT_TRUE(kept.ok()) << kept.status();
    kept_ = *kept;
    // The dead daemon's node, recorded in its node journal as a lookup records it.
    Found found;
    ASSERT_EQ(dead_->inodes().Lookup(InodeTable::kRootNodeId, "file", found), base::Errno());
    node_ = found.inode->nodeid;
  }

  std::unique_ptr<PassthroughFs> MakeFs() {
    DaemonOptions options;
    options.source = top_.path();
    return std::make_unique<PassthroughFs>(
        base::UniqueFd(::open(top_.path().c_str(), O_PATH | O_CLOEXEC)), options);
  }

  // What the keeper gives the next daemon: copies of `fds`, which Recover owns.
  static CrashRecovery Crash(const std::vector<int>& fds) {
    CrashRecovery crash{.incarnation = 1, .note = "", .fds = {}};
    for (int fd : fds) crash.fds.push_back(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
    return crash;
  }

  // A daemon started after the crash that journals, as the daemon the keeper starts does.
  absl::StatusOr<Recovered> RecoverFrom(const std::vector<int>& fds) {
    next_ = MakeFs();
    absl::StatusOr<std::vector<int>> fresh = next_state_.Journal(*next_);
    if (!fresh.ok()) return fresh.status();
    return next_state_.Recover(Crash(fds), *next_);
  }

  ringfuse::testing::TempDir top_{"ringfuse-kept-state"};
  std::unique_ptr<PassthroughFs> dead_;
  KeptState dead_state_;
  std::vector<int> kept_;  // the dead daemon's journals, owned by dead_state_
  uint64_t node_ = 0;
  std::unique_ptr<PassthroughFs> next_;
  KeptState next_state_;
};

TEST_F(KeptStateTest, EachJournalIsKnownByItsMemfdsName) {
  std::vector<std::string> names;
  for (int fd : kept_) names.push_back(MemfdName(fd).value_or("(none)"));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{ChangeJournal::kMemfdName, NodeJournal::kMemfdName,
                                             OpenFileJournal::kMemfdName}));
}

// The keeper promises no order, and keeps the application's own fds beside them.
TEST_F(KeptStateTest, JournalsInAnyOrderAmongOtherFdsAreTakenBack) {
  std::vector<int> given(kept_.rbegin(), kept_.rend());
  const base::UniqueFd other(::memfd_create("an-applications-own", MFD_CLOEXEC));
  const base::UniqueFd not_a_memfd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  given.insert(given.begin() + 1, {other.get(), not_a_memfd.get()});
  absl::StatusOr<Recovered> recovered = RecoverFrom(given);
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  EXPECT_TRUE(recovered->names_still_valid);
  // The dead daemon's node is back under its id.
  EXPECT_TRUE(next_->inodes().Get(node_).ok());
}

TEST_F(KeptStateTest, WithoutTheNodeJournalTheRecoveryFails) {
  std::vector<int> given;
  for (int fd : kept_) {
    if (MemfdName(fd) != NodeJournal::kMemfdName) given.push_back(fd);
  }
  absl::StatusOr<Recovered> recovered = RecoverFrom(given);
  EXPECT_EQ(recovered.status().code(), absl::StatusCode::kDataLoss) << recovered.status();
}

// A keeper an older ringfused started keeps no change journal: the recovery goes on without it.
TEST_F(KeptStateTest, WithoutTheChangeJournalTheRecoveryGoesOn) {
  std::vector<int> given;
  for (int fd : kept_) {
    if (MemfdName(fd) != ChangeJournal::kMemfdName) given.push_back(fd);
  }
  absl::StatusOr<Recovered> recovered = RecoverFrom(given);
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  EXPECT_TRUE(next_->inodes().Get(node_).ok());
}

TEST_F(KeptStateTest, TwoJournalsOfOneNameAreRefused) {
  std::vector<int> given = kept_;
  given.push_back(kept_.front());
  absl::StatusOr<Recovered> recovered = RecoverFrom(given);
  EXPECT_EQ(recovered.status().code(), absl::StatusCode::kDataLoss) << recovered.status();
}

// A name is a format: a journal under a name this daemon does not read is not read as one.
TEST_F(KeptStateTest, AJournalOfAnotherFormatIsNotAdopted) {
  std::vector<int> given;
  for (int fd : kept_) {
    if (MemfdName(fd) != NodeJournal::kMemfdName) given.push_back(fd);
  }
  const base::UniqueFd newer(::memfd_create("ringfused-nodes.2", MFD_CLOEXEC));
  given.push_back(newer.get());
  absl::StatusOr<Recovered> recovered = RecoverFrom(given);
  EXPECT_EQ(recovered.status().code(), absl::StatusCode::kDataLoss) << recovered.status();
}

}  // namespace
}  // namespace ringfuse::daemon
