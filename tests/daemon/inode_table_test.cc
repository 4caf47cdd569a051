#include "daemon/inode_table.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace ringfuse::daemon {
namespace {

class InodeTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/ringfuse-inodes.XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr);
    root_ = dir_template;
    std::ofstream(root_ + "/file") << "contents";
    std::filesystem::create_directory(root_ + "/dir");
    std::filesystem::create_hard_link(root_ + "/file", root_ + "/dir/hardlink");
    std::filesystem::create_symlink("/etc", root_ + "/link-out");
    table_ = std::make_unique<InodeTable>(UniqueFd(::open(root_.c_str(), O_PATH | O_CLOEXEC)));
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  uint64_t NodeOf(uint64_t parent, std::string_view name) {
    Found found;
    const int error = table_->Lookup(parent, name, found);
    EXPECT_EQ(error, 0) << std::strerror(error);
    return error == 0 ? found.inode->nodeid : 0;
  }

  std::string root_;
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
  std::filesystem::rename(root_ + "/dir", root_ + "/moved");
  EXPECT_EQ(NodeOf(dir, "hardlink"), NodeOf(InodeTable::kRootNodeId, "file"));
  EXPECT_EQ(NodeOf(InodeTable::kRootNodeId, "moved"), dir);
}

}  // namespace
}  // namespace ringfuse::daemon
