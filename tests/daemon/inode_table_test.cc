#include "daemon/inodes/inode_table.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "daemon/access/credentials.h"
#include "gtest/gtest.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::TempDir;
using ringfuse::testing::WriteFile;

class InodeTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(root_.path().empty()) << std::strerror(errno);
    WriteFile(root_.path() + "/file", "contents");
    std::filesystem::create_directory(root_.path() + "/dir");
    std::filesystem::create_hard_link(root_.path() + "/file", root_.path() + "/dir/hardlink");
    std::filesystem::create_symlink("/etc", root_.path() + "/link-out");
    table_ = std::make_unique<InodeTable>(
        base::UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)));
  }

  uint64_t NodeOf(uint64_t parent, std::string_view name) {
    Found found;
    const base::Errno error = table_->Lookup(parent, name, found);
    EXPECT_TRUE(error.ok()) << error;
    return error.ok() ? found.inode->nodeid : 0;
  }

  TempDir root_{"ringfuse-inodes"};  // declared first, so the table goes before it
  std::unique_ptr<InodeTable> table_;
};

TEST_F(InodeTableTest, ABackingInodeKeepsOneNodeIdUnderEveryName) {
  const uint64_t file = NodeOf(InodeTable::kRootNodeId, "file");
  const uint64_t dir = NodeOf(InodeTable::kRootNodeId, "dir");
  EXPECT_NE(file, InodeTable::kRootNodeId);
  EXPECT_NE(file, dir);
  EXPECT_EQ(NodeOf(dir, "hardlink"), file);
  EXPECT_EQ(table_->LookupCount(file), 2u);
}

TEST_F(InodeTableTest, ForgetDropsTheNodeWhenTheLastLookupGoes) {
  const uint64_t file = NodeOf(InodeTable::kRootNodeId, "file");
  NodeOf(InodeTable::kRootNodeId, "file");
  table_->Forget(file, 1);
  EXPECT_TRUE(table_->Get(file).ok());
  table_->Forget(file, 1);
  EXPECT_FALSE(table_->Get(file).ok());
  EXPECT_NE(NodeOf(InodeTable::kRootNodeId, "file"), file) << "a forgotten node id is not reused";
}

// Two nodes can name one backing inode: an O_TMPFILE node, and the node of a lookup of the name it
// was later linked under. Forgetting the older must leave the newer one found by name.
TEST_F(InodeTableTest, ForgetErasesOnlyItsOwnNodesBackingInode) {
  const uint64_t looked_up = NodeOf(InodeTable::kRootNodeId, "file");
  Found adopted;
  ASSERT_EQ(
      table_->Adopt(base::UniqueFd(::open((root_.path() + "/file").c_str(), O_PATH | O_CLOEXEC)),
                    adopted),
      base::Errno());
  ASSERT_NE(adopted.inode->nodeid, looked_up);
  table_->Forget(looked_up, 1);
  EXPECT_EQ(NodeOf(InodeTable::kRootNodeId, "file"), adopted.inode->nodeid)
      << "FORGET of one node dropped another node's backing inode";
}

// Nodes without a handle stay open: the least recently used beyond those to keep are named for
// the kernel to drop, each once until every other one has been named.
TEST_F(InodeTableTest, UnclosableNodesAreNamedLeastRecentlyUsedFirst) {
  std::vector<uint64_t> adopted;
  for (int i = 0; i < 10; ++i) {
    Found found;
    ASSERT_EQ(
        table_->Adopt(base::UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)), found),
        base::Errno());
    adopted.push_back(found.inode->nodeid);
  }
  EXPECT_EQ(table_->pinned_count(), 11u) << "ten adopted nodes and the root";
  EXPECT_TRUE(table_->Get(adopted[0]).ok());  // now the most recently used
  const std::vector<uint64_t> first = table_->UnclosableBeyond(4);
  EXPECT_EQ(first, std::vector<uint64_t>(adopted.begin() + 1, adopted.begin() + 7));
  const std::vector<uint64_t> second = table_->UnclosableBeyond(4);
  EXPECT_EQ(second.size(), 6u);
  EXPECT_EQ(second.front(), adopted[7]) << "names the ones not named yet first";
  for (uint64_t nodeid : first) table_->Forget(nodeid, 1);
  EXPECT_EQ(table_->pinned_count(), 5u);
  EXPECT_TRUE(table_->UnclosableBeyond(4).empty()) << "four are kept";
}

TEST_F(InodeTableTest, TheRootIsNeverForgotten) {
  table_->Forget(InodeTable::kRootNodeId, 1000);
  EXPECT_TRUE(table_->Get(InodeTable::kRootNodeId).ok());
}

TEST_F(InodeTableTest, SymlinksAreNotFollowed) {
  Found link;
  ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "link-out", link), base::Errno());
  EXPECT_TRUE(S_ISLNK(link.attr.st_mode)) << "the lookup reached outside the source tree";
}

TEST_F(InodeTableTest, OnlyPlainNamesAreLookedUp) {
  Found found;
  for (std::string_view name : {"", ".", "..", "dir/hardlink", "../etc"}) {
    EXPECT_EQ(table_->Lookup(InodeTable::kRootNodeId, name, found), base::Errno(EINVAL)) << name;
  }
  EXPECT_EQ(table_->Lookup(InodeTable::kRootNodeId, "missing", found), base::Errno(ENOENT));
  EXPECT_EQ(table_->Lookup(12345, "file", found), base::Errno(ESTALE));
}

TEST_F(InodeTableTest, ARenamedDirectoryKeepsItsNodeAndItsChildrenResolveThroughIt) {
  const uint64_t dir = NodeOf(InodeTable::kRootNodeId, "dir");
  std::filesystem::rename(root_.path() + "/dir", root_.path() + "/moved");
  EXPECT_EQ(NodeOf(dir, "hardlink"), NodeOf(InodeTable::kRootNodeId, "file"));
  EXPECT_EQ(NodeOf(InodeTable::kRootNodeId, "moved"), dir);
}

TEST_F(InodeTableTest, ReplaceRootReportsTrackedNamesOnceAndSwitchesTheRoot) {
  table_->TrackEntries();
  const uint64_t dir = NodeOf(InodeTable::kRootNodeId, "dir");
  NodeOf(dir, "hardlink");
  Found missing;
  EXPECT_EQ(table_->Lookup(InodeTable::kRootNodeId, "missing", missing), base::Errno(ENOENT));
  EXPECT_EQ(table_->Lookup(999, "under-a-forgotten-parent", missing), base::Errno(ESTALE));

  KernelCache cache = table_->ReplaceRoot(
      base::UniqueFd(::open((root_.path() + "/dir").c_str(), O_PATH | O_CLOEXEC)));
  EXPECT_TRUE(cache.entries_complete);
  const decltype(cache.entries) expected = {
      {InodeTable::kRootNodeId, "dir"}, {dir, "hardlink"}, {InodeTable::kRootNodeId, "missing"}};
  EXPECT_EQ(cache.entries, expected);
  EXPECT_EQ(cache.nodeids.size(), table_->size());
  // Node 1 now is what was "dir": its entry is found there.
  EXPECT_EQ(NodeOf(InodeTable::kRootNodeId, "hardlink"), NodeOf(dir, "hardlink"));
  cache = table_->ReplaceRoot(base::UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)));
  EXPECT_EQ(cache.entries.size(), 2u) << "names reported by a switch are reported only once";
}

TEST_F(InodeTableTest, TrackingPastItsLimitMarksTheNamesIncomplete) {
  table_->TrackEntries(2);
  Found found;
  for (const char* name : {"a", "b", "a", "b"}) {
    EXPECT_EQ(table_->Lookup(InodeTable::kRootNodeId, name, found), base::Errno(ENOENT));
  }
  KernelCache cache =
      table_->ReplaceRoot(base::UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)));
  EXPECT_EQ(cache.entries.size(), 2u);
  EXPECT_TRUE(cache.entries_complete) << "names already tracked do not count twice";
  for (const char* name : {"a", "b", "c"}) {
    EXPECT_EQ(table_->Lookup(InodeTable::kRootNodeId, name, found), base::Errno(ENOENT));
  }
  cache = table_->ReplaceRoot(base::UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)));
  EXPECT_EQ(cache.entries.size(), 2u);
  EXPECT_FALSE(cache.entries_complete);
  cache = table_->ReplaceRoot(base::UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)));
  EXPECT_TRUE(cache.entries_complete) << "a switch starts a new, complete set";
}

// A table that keeps at most kOpenLimit nodes open, over `files` files named f0, f1...
class BoundedInodeTableTest : public InodeTableTest {
 protected:
  static constexpr size_t kOpenLimit = 4;
  static constexpr int kFiles = 50;

  void SetUp() override {
    InodeTableTest::SetUp();
    for (int i = 0; i < kFiles; ++i) WriteFile(root_.path() + "/f" + std::to_string(i), "x");
    table_ = std::make_unique<InodeTable>(
        base::UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)), kOpenLimit);
    // Reopening needs CAP_DAC_READ_SEARCH; without it every node stays open (tested below).
    Found probe;
    ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "f0", probe), base::Errno());
    reopenable_ = table_->pinned_count() == 1;
    table_->Forget(probe.inode->nodeid, 1);
  }

  // Makes new files until one gets inode number `ino` (ext4 hands a freed number out again
  // soon); returns its name, or "" if none did.
  std::string NewFileReusing(ino_t ino) {
    for (int i = 0; i < 200; ++i) {
      const std::string name = "new" + std::to_string(i);
      WriteFile(root_.path() + "/" + name, "new");
      struct stat st {};
      if (::stat((root_.path() + "/" + name).c_str(), &st) == 0 && st.st_ino == ino) return name;
    }
    return "";
  }

  // The (st_dev, st_ino) of what the node's fd reaches.
  std::pair<dev_t, ino_t> BackingOf(uint64_t nodeid) {
    const base::ErrnoOr<std::shared_ptr<const Inode>> inode = table_->Get(nodeid);
    struct stat st {};
    if (!inode.ok() || ::fstat((*inode)->path.get(), &st) != 0) return {0, 0};
    return {st.st_dev, st.st_ino};
  }

  bool reopenable_ = false;
};

TEST_F(BoundedInodeTableTest, KeepsAtMostItsLimitOpenAndReopensEveryNodeOnDemand) {
  if (!reopenable_) GTEST_SKIP() << "open_by_handle_at needs CAP_DAC_READ_SEARCH";
  std::vector<Found> nodes(kFiles);
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "f" + std::to_string(i), nodes[i]),
              base::Errno());
    EXPECT_LE(table_->open_count(), kOpenLimit + 1) << "the root stays open besides the limit";
  }
  for (const Found& node : nodes) {
    EXPECT_EQ(BackingOf(node.inode->nodeid), std::pair(node.attr.st_dev, node.attr.st_ino));
  }
  EXPECT_LE(table_->open_count(), kOpenLimit + 1);
}

// Nodes keep most of the fds (a reopen per lookup costs a working set larger than the budget),
// but never the room in numbers that open files, lock owners and the transport need.
TEST(InodeTableBudget, LeavesAnEighthOrAThousandFdsYetNodesGetAtLeastAQuarter) {
  EXPECT_EQ(InodeTable::OpenLimitFor(256), 64u);
  EXPECT_EQ(InodeTable::OpenLimitFor(1024), 256u);
  EXPECT_EQ(InodeTable::OpenLimitFor(2048), 1024u);
  EXPECT_EQ(InodeTable::OpenLimitFor(20000), 17500u);
  EXPECT_EQ(InodeTable::OpenLimitFor(524288), InodeTable::kMostOpen);
  EXPECT_EQ(InodeTable::OpenLimitFor(8), InodeTable::kFewestOpen);
}

// An open that ran out of fds takes some back (fd_room.h): the table closes unused nodes and
// keeps its budget that much lower a while, so that the fds stay with the opens that needed them.
TEST_F(BoundedInodeTableTest, GivesFdsBackAndKeepsItsBudgetLoweredAWhile) {
  if (!reopenable_) GTEST_SKIP() << "open_by_handle_at needs CAP_DAC_READ_SEARCH";
  constexpr size_t kLimit = 40;
  constexpr auto kLoweredFor = absl::Milliseconds(300);
  table_ = std::make_unique<InodeTable>(
      base::UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)), kLimit, kLoweredFor);
  const auto look_up_all = [&] {
    for (int i = 0; i < kFiles; ++i) {
      Found found;
      ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "f" + std::to_string(i), found),
                base::Errno());
    }
  };
  ASSERT_NO_FATAL_FAILURE(look_up_all());
  ASSERT_EQ(table_->open_count(), kLimit + 1) << "the budget is full, the root besides it";
  EXPECT_EQ(table_->GiveBack(8), 8u);
  EXPECT_EQ(table_->budget(), kLimit - 8);
  ASSERT_NO_FATAL_FAILURE(look_up_all());
  EXPECT_EQ(table_->open_count(), kLimit - 8 + 1) << "lookups took the fds back at once";
  EXPECT_EQ(table_->GiveBack(1000), kLimit - 8 - InodeTable::kFewestOpen)
      << "a few nodes stay open whatever is asked";
  absl::SleepFor(kLoweredFor + absl::Milliseconds(100));
  EXPECT_EQ(table_->budget(), kLimit);
  ASSERT_NO_FATAL_FAILURE(look_up_all());
  EXPECT_EQ(table_->open_count(), kLimit + 1);
}

TEST_F(BoundedInodeTableTest, AClosedNodeFollowsItsInodeAcrossARename) {
  if (!reopenable_) GTEST_SKIP() << "open_by_handle_at needs CAP_DAC_READ_SEARCH";
  Found moved;
  ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "f1", moved), base::Errno());
  Found other;
  for (int i = 2; i < 2 + static_cast<int>(kOpenLimit); ++i) {
    ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "f" + std::to_string(i), other),
              base::Errno());
  }
  const uint64_t moved_node = moved.inode->nodeid;
  moved.inode.reset();  // now closed: only its handle is left
  std::filesystem::rename(root_.path() + "/f1", root_.path() + "/dir/renamed");
  EXPECT_EQ(BackingOf(moved_node), std::pair(moved.attr.st_dev, moved.attr.st_ino));
  EXPECT_EQ(table_->Get(12345).error(), base::Errno(ESTALE));
}

// A closed node does not keep its inode alive, so its number can come back for another file:
// that file gets a node of its own, the old node answers ESTALE, and forgetting the old node
// leaves the new one's mapping alone.
TEST_F(BoundedInodeTableTest, AReusedInodeNumberIsAnotherNode) {
  if (!reopenable_) GTEST_SKIP() << "open_by_handle_at needs CAP_DAC_READ_SEARCH";
  Found old_file;
  ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "victim", old_file), base::Errno(ENOENT));
  WriteFile(root_.path() + "/victim", "old");
  ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "victim", old_file), base::Errno());
  const uint64_t old_node = old_file.inode->nodeid;
  old_file.inode.reset();
  Found other;
  for (int i = 0; i < static_cast<int>(kOpenLimit); ++i) {
    ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "f" + std::to_string(i), other),
              base::Errno());
  }
  other.inode.reset();
  std::filesystem::remove(root_.path() + "/victim");
  const std::string reused = NewFileReusing(old_file.attr.st_ino);
  EXPECT_EQ(table_->Get(old_node).error(), base::Errno(ESTALE))
      << "a deleted inode is still served";
  if (reused.empty()) return;  // a filesystem that does not reuse numbers soon (tmpfs) ends here
  Found new_file;
  ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, reused, new_file), base::Errno());
  EXPECT_NE(new_file.inode->nodeid, old_node);
  EXPECT_EQ(table_->Get(old_node).error(), base::Errno(ESTALE));
  table_->Forget(old_node, 1);
  Found again;
  ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, reused, again), base::Errno());
  EXPECT_EQ(again.inode->nodeid, new_file.inode->nodeid) << "FORGET dropped another node's inode";
}

// A table that cannot open handles, as in a user's own daemon (this thread without
// CAP_DAC_READ_SEARCH): closed nodes are reopened by the name they were last found by.
class NamedInodeTableTest : public BoundedInodeTableTest {
 protected:
  static constexpr uint64_t kDacReadSearch = uint64_t{1} << 2;

  void SetUp() override {
    const std::optional<Capabilities> caps = ThreadCapabilities();
    ASSERT_TRUE(caps.has_value());
    old_caps_ = *caps;
    Capabilities without = *caps;
    without.effective &= ~kDacReadSearch;
    ASSERT_TRUE(SetThreadCapabilities(without));
    BoundedInodeTableTest::SetUp();
    ASSERT_FALSE(table_->reopens_by_handle()) << "the tests below would prove nothing";
    std::filesystem::create_directories(root_.path() + "/a/b");
    WriteFile(root_.path() + "/a/b/deep", "deep");
  }
  void TearDown() override { SetThreadCapabilities(old_caps_); }

  // Looks `name` up into `found`, lets go of its fd and closes it; returns its node id.
  uint64_t LookUpClosed(std::string_view name, Found& found) {
    EXPECT_EQ(table_->Lookup(InodeTable::kRootNodeId, name, found), base::Errno());
    const uint64_t nodeid = found.inode == nullptr ? 0 : found.inode->nodeid;
    found.inode.reset();
    CloseTheOthers();
    return nodeid;
  }

  // Renames f1 to dir/renamed, as the daemon does through the mount.
  void RenameF1IntoDir() {
    const uint64_t dir = NodeOf(InodeTable::kRootNodeId, "dir");
    std::filesystem::rename(root_.path() + "/f1", root_.path() + "/dir/renamed");
    table_->Renamed(InodeTable::kRootNodeId, "f1", dir, "renamed", false, nullptr);
  }

  // Looks up kOpenLimit other files, so that every node looked up before is closed.
  void CloseTheOthers() {
    Found other;
    for (int i = 10; i < 10 + static_cast<int>(kOpenLimit); ++i) {
      ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "f" + std::to_string(i), other),
                base::Errno());
    }
  }

  Capabilities old_caps_;
};

TEST_F(NamedInodeTableTest, KeepsAtMostItsLimitOpenAndReopensEveryNodeByName) {
  std::vector<Found> nodes(kFiles);
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "f" + std::to_string(i), nodes[i]),
              base::Errno());
    EXPECT_LE(table_->open_count(), kOpenLimit + 1) << "the root stays open besides the limit";
  }
  EXPECT_EQ(table_->pinned_count(), 1u) << "only the root is kept open";
  for (const Found& node : nodes) {
    EXPECT_EQ(BackingOf(node.inode->nodeid), std::pair(node.attr.st_dev, node.attr.st_ino));
  }
  EXPECT_LE(table_->open_count(), kOpenLimit + 1);
}

// The file's directories are closed too: each is reopened under its own, from the root down.
TEST_F(NamedInodeTableTest, AClosedNodeUnderClosedDirectoriesIsReopenedThroughThem) {
  Found deep;
  ASSERT_EQ(table_->Lookup(NodeOf(NodeOf(InodeTable::kRootNodeId, "a"), "b"), "deep", deep),
            base::Errno());
  const uint64_t deep_node = deep.inode->nodeid;
  deep.inode.reset();
  CloseTheOthers();
  EXPECT_EQ(table_->open_count(), kOpenLimit + 1);
  EXPECT_EQ(BackingOf(deep_node), std::pair(deep.attr.st_dev, deep.attr.st_ino));
}

TEST_F(NamedInodeTableTest, AClosedNodeFollowsARenameThroughTheMount) {
  Found moved;
  const uint64_t moved_node = LookUpClosed("f1", moved);
  RenameF1IntoDir();
  CloseTheOthers();
  EXPECT_EQ(BackingOf(moved_node), std::pair(moved.attr.st_dev, moved.attr.st_ino));
}

// Renamed while open (as the kernel's rename of a file in use is): it moves on its list, and
// closed later it reopens by the new name.
TEST_F(NamedInodeTableTest, AnOpenNodeRenamedIsReopenedByItsNewNameOnceClosed) {
  Found moved;
  ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "f1", moved), base::Errno());
  RenameF1IntoDir();
  const uint64_t moved_node = moved.inode->nodeid;
  moved.inode.reset();
  CloseTheOthers();
  EXPECT_EQ(table_->open_count(), kOpenLimit + 1);
  EXPECT_EQ(BackingOf(moved_node), std::pair(moved.attr.st_dev, moved.attr.st_ino));
}

TEST_F(NamedInodeTableTest, AnExchangeSwapsTheTwoNodesNames) {
  Found first, second;
  ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "f1", first), base::Errno());
  ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "f2", second), base::Errno());
  const uint64_t first_node = first.inode->nodeid, second_node = second.inode->nodeid;
  first.inode.reset();
  second.inode.reset();
  CloseTheOthers();
  ASSERT_EQ(::renameat2(AT_FDCWD, (root_.path() + "/f1").c_str(), AT_FDCWD,
                        (root_.path() + "/f2").c_str(), RENAME_EXCHANGE),
            0);
  table_->Renamed(InodeTable::kRootNodeId, "f1", InodeTable::kRootNodeId, "f2", true, nullptr);
  EXPECT_EQ(BackingOf(first_node), std::pair(first.attr.st_dev, first.attr.st_ino));
  EXPECT_EQ(BackingOf(second_node), std::pair(second.attr.st_dev, second.attr.st_ino));
}

// Negative control for the rename above: what moved behind the table's back is not reached by
// its old name, nor is what took that name since.
TEST_F(NamedInodeTableTest, ANameChangedBehindTheMountAnswersEstale) {
  Found moved;
  const uint64_t moved_node = LookUpClosed("f1", moved);
  std::filesystem::rename(root_.path() + "/f1", root_.path() + "/dir/renamed");
  EXPECT_EQ(table_->Get(moved_node).error(), base::Errno(ESTALE));
  WriteFile(root_.path() + "/f1", "another file");
  EXPECT_EQ(table_->Get(moved_node).error(), base::Errno(ESTALE))
      << "another inode served as the moved one";
}

// A removed name cannot reopen its node: held open across the removal, it stays open until FORGET.
TEST_F(NamedInodeTableTest, ANodeWhoseNameIsRemovedStaysOpenUntilForget) {
  Found removed;
  const uint64_t removed_node = LookUpClosed("f1", removed);
  {
    const std::shared_ptr<const Inode> held = table_->NodeNamed(InodeTable::kRootNodeId, "f1");
    ASSERT_NE(held, nullptr);
    std::filesystem::remove(root_.path() + "/f1");
    table_->Removed(InodeTable::kRootNodeId, "f1", held);
  }
  EXPECT_EQ(table_->pinned_count(), 2u);
  CloseTheOthers();
  EXPECT_EQ(BackingOf(removed_node), std::pair(removed.attr.st_dev, removed.attr.st_ino));
  table_->Forget(removed_node, 1);
  EXPECT_EQ(table_->pinned_count(), 1u);
}

// The kernel may forget a directory before the nodes under it: it stays, closed, to reopen them
// by, and goes with the last of them.
TEST_F(NamedInodeTableTest, AForgottenDirectoryStaysWhileANodeIsNamedUnderIt) {
  const size_t before = table_->size();
  const uint64_t dir = NodeOf(InodeTable::kRootNodeId, "a");
  Found file;
  ASSERT_EQ(table_->Lookup(NodeOf(dir, "b"), "deep", file), base::Errno());
  const uint64_t file_node = file.inode->nodeid;
  file.inode.reset();
  table_->Forget(dir, 1);
  table_->Forget(NodeOf(dir, "b"), 2);
  EXPECT_EQ(table_->size(), before + 3);
  CloseTheOthers();
  EXPECT_EQ(BackingOf(file_node), std::pair(file.attr.st_dev, file.attr.st_ino));
  table_->Forget(file_node, 1);
  EXPECT_EQ(table_->size(), before + static_cast<size_t>(kOpenLimit))
      << "the file and its forgotten directories went together";
}

// Another worker's lookups (or the rename's own reopens of deep directories) may close the node
// the caller holds before its name goes: it keeps the held fd, the kernel still having it open.
TEST_F(NamedInodeTableTest, AHeldNodeClosedBeforeItsRemovalStaysReachable) {
  Found removed;
  const uint64_t removed_node = LookUpClosed("f1", removed);
  {
    const std::shared_ptr<const Inode> held = table_->NodeNamed(InodeTable::kRootNodeId, "f1");
    ASSERT_NE(held, nullptr);
    CloseTheOthers();
    std::filesystem::remove(root_.path() + "/f1");
    table_->Removed(InodeTable::kRootNodeId, "f1", held);
  }
  EXPECT_EQ(BackingOf(removed_node), std::pair(removed.attr.st_dev, removed.attr.st_ino));
}

// Revisions mode: a file shared by two revisions (hard-linked) under directories that are other
// inodes in the next revision is still reached under the old root's directories.
TEST_F(NamedInodeTableTest, AClosedNodeUnchangedAcrossARootSwitchStaysReachable) {
  std::filesystem::create_directories(root_.path() + "/r2/a/b");
  std::filesystem::create_hard_link(root_.path() + "/a/b/deep", root_.path() + "/r2/a/b/deep");
  Found deep;
  ASSERT_EQ(table_->Lookup(NodeOf(NodeOf(InodeTable::kRootNodeId, "a"), "b"), "deep", deep),
            base::Errno());
  const uint64_t deep_node = deep.inode->nodeid;
  deep.inode.reset();
  CloseTheOthers();
  table_->ReplaceRoot(base::UniqueFd(::open((root_.path() + "/r2").c_str(), O_PATH | O_CLOEXEC)));
  EXPECT_EQ(BackingOf(deep_node), std::pair(deep.attr.st_dev, deep.attr.st_ino))
      << std::strerror(errno);
}

// A shell's cwd in a/b while, behind the mount, b moves out and a moves into it: `ls a` there
// finds a under b while b's name says it is under a. Two nodes naming each other would stay
// forever; a is left with its old name instead.
TEST_F(NamedInodeTableTest, StaleNamesThatWouldMakeALoopDoNotKeepNodesForever) {
  const size_t before = table_->size();
  const uint64_t a = NodeOf(InodeTable::kRootNodeId, "a");
  const uint64_t b = NodeOf(a, "b");
  std::filesystem::rename(root_.path() + "/a/b", root_.path() + "/b2");
  std::filesystem::rename(root_.path() + "/a", root_.path() + "/b2/a");
  ASSERT_EQ(NodeOf(b, "a"), a);
  table_->Forget(a, 2);
  table_->Forget(b, 1);
  EXPECT_EQ(table_->size(), before);
}

// A closed node does not keep its inode, so its number can come back for another file, which
// must not be served as the old node (the handle tells them apart where there is one).
TEST_F(NamedInodeTableTest, AReusedInodeNumberUnderAnotherNameIsAnotherNode) {
  WriteFile(root_.path() + "/victim", "old");
  Found old_file;
  const uint64_t old_node = LookUpClosed("victim", old_file);
  std::filesystem::remove(root_.path() + "/victim");
  const std::string reused = NewFileReusing(old_file.attr.st_ino);
  EXPECT_FALSE(table_->Get(old_node).ok()) << "a deleted inode is still served";
  if (reused.empty()) return;  // a filesystem that does not reuse numbers soon (tmpfs) ends here
  Found new_file;
  ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, reused, new_file), base::Errno());
  EXPECT_NE(new_file.inode->nodeid, old_node) << "another file got the deleted file's node";
}

}  // namespace
}  // namespace ringfuse::daemon
