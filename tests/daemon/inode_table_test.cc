#include "daemon/inode_table.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

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
    table_ =
        std::make_unique<InodeTable>(UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)));
  }

  uint64_t NodeOf(uint64_t parent, std::string_view name) {
    Found found;
    const int error = table_->Lookup(parent, name, found);
    EXPECT_EQ(error, 0) << std::strerror(error);
    return error == 0 ? found.inode->nodeid : 0;
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
  EXPECT_NE(table_->Get(file), nullptr);
  table_->Forget(file, 1);
  EXPECT_EQ(table_->Get(file), nullptr);
  EXPECT_NE(NodeOf(InodeTable::kRootNodeId, "file"), file) << "a forgotten node id is not reused";
}

TEST_F(InodeTableTest, TheRootIsNeverForgotten) {
  table_->Forget(InodeTable::kRootNodeId, 1000);
  EXPECT_NE(table_->Get(InodeTable::kRootNodeId), nullptr);
}

TEST_F(InodeTableTest, SymlinksAreNotFollowed) {
  Found link;
  ASSERT_EQ(table_->Lookup(InodeTable::kRootNodeId, "link-out", link), 0);
  EXPECT_TRUE(S_ISLNK(link.attr.st_mode)) << "the lookup reached outside the source tree";
}

TEST_F(InodeTableTest, OnlyPlainNamesAreLookedUp) {
  Found found;
  for (std::string_view name : {"", ".", "..", "dir/hardlink", "../etc"}) {
    EXPECT_EQ(table_->Lookup(InodeTable::kRootNodeId, name, found), EINVAL) << name;
  }
  EXPECT_EQ(table_->Lookup(InodeTable::kRootNodeId, "missing", found), ENOENT);
  EXPECT_EQ(table_->Lookup(12345, "file", found), ESTALE);
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
  EXPECT_EQ(table_->Lookup(InodeTable::kRootNodeId, "missing", missing), ENOENT);
  EXPECT_EQ(table_->Lookup(999, "under-a-forgotten-parent", missing), ESTALE);

  KernelCache cache =
      table_->ReplaceRoot(UniqueFd(::open((root_.path() + "/dir").c_str(), O_PATH | O_CLOEXEC)));
  EXPECT_TRUE(cache.entries_complete);
  const decltype(cache.entries) expected = {
      {InodeTable::kRootNodeId, "dir"}, {dir, "hardlink"}, {InodeTable::kRootNodeId, "missing"}};
  EXPECT_EQ(cache.entries, expected);
  EXPECT_EQ(cache.nodeids.size(), table_->size());
  // Node 1 now is what was "dir": its entry is found there.
  EXPECT_EQ(NodeOf(InodeTable::kRootNodeId, "hardlink"), NodeOf(dir, "hardlink"));
  cache = table_->ReplaceRoot(UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)));
  EXPECT_EQ(cache.entries.size(), 2u) << "names reported by a switch are reported only once";
}

TEST_F(InodeTableTest, TrackingPastItsLimitMarksTheNamesIncomplete) {
  table_->TrackEntries(2);
  Found found;
  for (const char* name : {"a", "b", "a", "b"})
    table_->Lookup(InodeTable::kRootNodeId, name, found);
  KernelCache cache =
      table_->ReplaceRoot(UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)));
  EXPECT_EQ(cache.entries.size(), 2u);
  EXPECT_TRUE(cache.entries_complete) << "names already tracked do not count twice";
  for (const char* name : {"a", "b", "c"}) table_->Lookup(InodeTable::kRootNodeId, name, found);
  cache = table_->ReplaceRoot(UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)));
  EXPECT_EQ(cache.entries.size(), 2u);
  EXPECT_FALSE(cache.entries_complete);
  cache = table_->ReplaceRoot(UniqueFd(::open(root_.path().c_str(), O_PATH | O_CLOEXEC)));
  EXPECT_TRUE(cache.entries_complete) << "a switch starts a new, complete set";
}

}  // namespace
}  // namespace ringfuse::daemon
