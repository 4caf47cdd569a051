// InodeTable shared by many more threads than CPUs, as the queue threads share it: lookups,
// gets and forgets of the same names from every thread, with an open-node budget far below the
// working set so that CLOCK closes and reopens nodes all along. Every count must come out exact
// (a lost update leaves a node behind or drops one in use, which answers ESTALE), every node
// must reach its own inode, and the budget must hold. Run under ThreadSanitizer too (label tsan).
#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/time/clock.h"
#include "daemon/access/credentials.h"
#include "daemon/inodes/inode_table.h"
#include "daemon/inodes/mutex_mode.h"
#include "gtest/gtest.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::TempDir;
using ringfuse::testing::WriteFile;

constexpr int kThreads = 16;
constexpr int kFiles = 64;
constexpr size_t kOpenLimit = 8;
constexpr int kRounds = 300;

class InodeTableConcurrency : public ::testing::Test {
 protected:
  void SetUp() override {
    TurnOffMutexDeadlockGraph();  // as ringfused does
    ASSERT_FALSE(root_.path().empty()) << std::strerror(errno);
    ASSERT_EQ(::mkdir((root_.path() + "/d").c_str(), 0755), 0);
    for (int i = 0; i < kFiles; ++i) {
      WriteFile(root_.path() + "/d/f" + std::to_string(i), "x");
      struct stat st {};
      ASSERT_EQ(::stat((root_.path() + "/d/f" + std::to_string(i)).c_str(), &st), 0);
      inodes_.push_back(st.st_ino);
    }
    table_ = std::make_unique<InodeTable>(
        base::UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)), kOpenLimit);
  }

  // The table again, made without CAP_DAC_READ_SEARCH as a user's own daemon is: nodes are
  // named, and reopened by name, under the names lock.
  void MakeTableWithoutHandles() {
    constexpr uint64_t kDacReadSearch = uint64_t{1} << 2;
    const std::optional<Capabilities> caps = ThreadCapabilities();
    ASSERT_TRUE(caps.has_value());
    Capabilities without = *caps;
    without.effective &= ~kDacReadSearch;
    ASSERT_TRUE(SetThreadCapabilities(without));
    table_ = std::make_unique<InodeTable>(
        base::UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)), kOpenLimit);
    ASSERT_TRUE(SetThreadCapabilities(*caps));
    ASSERT_FALSE(table_->reopens_by_handle()) << "the test would prove nothing";
  }

  // Every thread's rounds at once; returns the failures.
  int AllRounds() {
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { failures += Rounds(t); });
    for (std::thread& thread : threads) thread.join();
    return failures.load();
  }

  // One thread's rounds: each file looked up (through the directory's node, as the kernel walks),
  // got again by node id, checked, and both lookups forgotten. Returns the failures it saw.
  int Rounds(int thread) {
    int failures = 0;
    for (int round = 0; round < kRounds; ++round) {
      const int file = (round * 7 + thread * 13) % kFiles;
      Found dir;
      if (!table_->Lookup(InodeTable::kRootNodeId, "d", dir).ok()) {
        ++failures;
        continue;
      }
      Found found;
      const base::Errno error =
          table_->Lookup(dir.inode->nodeid, "f" + std::to_string(file), found, round % 2 == 0);
      if (!error.ok() || found.attr.st_ino != inodes_[file]) ++failures;
      if (error.ok()) {
        const base::ErrnoOr<std::shared_ptr<const Inode>> again = table_->Get(found.inode->nodeid);
        struct stat st {};
        if (!again.ok() || ::fstat((*again)->path.get(), &st) != 0 || st.st_ino != inodes_[file]) {
          ++failures;
        }
        table_->Forget(found.inode->nodeid, 1);
      }
      table_->Forget(dir.inode->nodeid, 1);
    }
    return failures;
  }

  TempDir root_{"ringfuse-inodes-concurrency"};
  std::vector<ino_t> inodes_;
  std::unique_ptr<InodeTable> table_;
};

TEST_F(InodeTableConcurrency, CountsStayExactAndTheBudgetHoldsUnderManyThreads) {
  EXPECT_EQ(AllRounds(), 0);
  EXPECT_EQ(table_->size(), 1u) << "every lookup was forgotten: only the root is left";
  EXPECT_LE(table_->open_count(), kOpenLimit + 1) << "the root stays open besides the limit";
  EXPECT_EQ(table_->lookups_served(), uint64_t{2} * kThreads * kRounds);
}

// Nodes named under a directory keep it while they stay; forgotten, they let it go.
TEST_F(InodeTableConcurrency, NamedNodesCountExactlyAndLetTheirDirectoryGo) {
  ASSERT_NO_FATAL_FAILURE(MakeTableWithoutHandles());
  EXPECT_EQ(AllRounds(), 0);
  EXPECT_EQ(table_->size(), 1u) << "every lookup was forgotten: only the root is left";
  EXPECT_LE(table_->open_count(), kOpenLimit + 1) << "the root stays open besides the limit";
  EXPECT_EQ(table_->pinned_count(), 1u) << "every node was named, so none stays pinned";
}

// Opens elsewhere in the daemon that run out of fds take some back from the table (fd_room.h)
// at any moment, from any thread: counts stay exact and every node still reaches its inode.
TEST_F(InodeTableConcurrency, GivingFdsBackWhileLookingUpKeepsCountsExact) {
  std::atomic<bool> done{false};
  size_t given = 0;
  std::thread giver([&] {
    while (!done.load()) given += table_->GiveBack(4);
  });
  const int failures = AllRounds();
  done = true;
  giver.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(table_->size(), 1u) << "every lookup was forgotten: only the root is left";
  EXPECT_LE(table_->open_count(), kOpenLimit + 1) << "the root stays open besides the limit";
  EXPECT_GT(given, 0u) << "nothing was given back: the test proved nothing";
}

// Revisions mode: every lookup notes its name while root switches come one after another
// (looked_up_names.h); each name looked up is reported by a switch, and the counts stay exact.
TEST_F(InodeTableConcurrency, EveryNameLookedUpReachesASwitchUnderManyThreads) {
  table_->TrackEntries();
  auto switch_root = [&] {
    return table_->ReplaceRoot(base::UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)));
  };
  std::atomic<bool> done{false};
  absl::flat_hash_set<std::string> reported;
  bool complete = true;
  size_t switches = 0;
  std::thread switcher([&] {
    for (; !done.load(); ++switches) {
      const KernelCache cache = switch_root();
      for (const auto& entry : cache.entries) reported.insert(entry.second);
      complete = complete && cache.entries_complete;
      absl::SleepFor(absl::Milliseconds(1));
    }
  });
  const int failures = AllRounds();
  done = true;
  switcher.join();
  for (const auto& entry : switch_root().entries) reported.insert(entry.second);
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(table_->size(), 1u) << "every lookup was forgotten: only the root is left";
  EXPECT_TRUE(complete);
  EXPECT_EQ(reported.size(), size_t{kFiles} + 1) << "every file's name and the directory's";
  EXPECT_GT(switches, 1u) << "no switch ran among the lookups: the test proved nothing";
}

// The negative control for the count above: a lookup not forgotten keeps its node.
TEST_F(InodeTableConcurrency, ALookupNotForgottenKeepsItsNode) {
  Found dir;
  ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "d", dir), base::Errno());
  EXPECT_EQ(Rounds(0), 0);
  EXPECT_EQ(table_->size(), 2u);
  EXPECT_EQ(table_->LookupCount(dir.inode->nodeid), 1u);
}

}  // namespace
}  // namespace ringfuse::daemon
