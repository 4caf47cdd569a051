// The node journal a kept ringfused writes to a memfd: the nodes and lookup counts one process
// records are what the next finds through its own copy of the memfd, dropped nodes gone; a node
// that could not be recorded makes the recovery incomplete while it lives; and an inode table fed
// by the journal comes back after a "crash" with the same node ids, reaching the same inodes.
#include "daemon/node_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "daemon/inode_table.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

std::unique_ptr<NodeJournal> AdoptCopyOf(const NodeJournal& journal) {
  absl::StatusOr<std::unique_ptr<NodeJournal>> adopted =
      NodeJournal::Adopt(internal::UniqueFd(::fcntl(journal.fd(), F_DUPFD_CLOEXEC, 0)));
  EXPECT_TRUE(adopted.ok()) << adopted.status();
  return adopted.ok() ? std::move(*adopted) : nullptr;
}

TEST(NodeJournal, TheNextProcessFindsTheNodesAndTheirLookups) {
  absl::StatusOr<std::unique_ptr<NodeJournal>> journal = NodeJournal::Create();
  ASSERT_TRUE(journal.ok()) << journal.status();
  EXPECT_TRUE((*journal)->Added(2, 10, 100, S_IFREG, "handle two", 1));
  EXPECT_TRUE((*journal)->Added(3, 10, 101, S_IFDIR, "handle three", 1));
  EXPECT_TRUE((*journal)->Added(4, 10, 102, S_IFLNK, "handle four", 1));
  (*journal)->Counted(2, 5);
  (*journal)->Dropped(3, true);
  std::unique_ptr<NodeJournal> next = AdoptCopyOf(**journal);
  ASSERT_NE(next, nullptr);
  const NodeJournal::Recovery recovery = next->Recover();
  EXPECT_TRUE(recovery.complete);
  ASSERT_THAT(recovery.nodes,
              ElementsAre(Field(&SavedNode::nodeid, 2), Field(&SavedNode::nodeid, 4)));
  EXPECT_EQ(recovery.nodes[0].lookups, 5u);
  EXPECT_EQ(recovery.nodes[0].ino, 100u);
  EXPECT_EQ(recovery.nodes[0].type, static_cast<mode_t>(S_IFREG));
  EXPECT_EQ(recovery.nodes[0].handle, "handle two");
  EXPECT_EQ(recovery.nodes[1].type, static_cast<mode_t>(S_IFLNK));
}

TEST(NodeJournal, ANodeThatCannotBeRecordedMakesTheRecoveryIncompleteWhileItLives) {
  absl::StatusOr<std::unique_ptr<NodeJournal>> journal = NodeJournal::Create();
  ASSERT_TRUE(journal.ok());
  EXPECT_FALSE((*journal)->Added(5, 10, 200, S_IFREG, "", 1));  // no handle: an O_TMPFILE
  EXPECT_FALSE(
      (*journal)->Added(6, 10, 201, S_IFREG, std::string(NodeJournal::kMaxHandle + 1, 'h'), 1));
  EXPECT_FALSE(AdoptCopyOf(**journal)->Recover().complete);
  // The negative control: once both are dropped, nothing the kernel knows is missing.
  absl::StatusOr<std::unique_ptr<NodeJournal>> again = NodeJournal::Create();
  ASSERT_TRUE(again.ok());
  (*again)->Added(5, 10, 200, S_IFREG, "", 1);
  (*again)->Added(6, 10, 201, S_IFREG, "", 1);
  (*again)->Dropped(5, false);
  (*again)->Dropped(6, false);
  const NodeJournal::Recovery recovery = AdoptCopyOf(**again)->Recover();
  EXPECT_TRUE(recovery.complete);
  EXPECT_THAT(recovery.nodes, IsEmpty());
}

TEST(NodeJournal, AMemfdThatIsNoJournalIsRefused) {
  internal::UniqueFd other(::memfd_create("not a journal", MFD_CLOEXEC));
  ASSERT_TRUE(other.valid());
  ASSERT_EQ(::ftruncate(other.get(), 4096), 0);
  EXPECT_TRUE(absl::IsDataLoss(NodeJournal::Adopt(std::move(other)).status()));
}

// A table that records in the journal, and one made after it "crashed" (dropped without a word)
// from the journal alone: the same node ids reach the same inodes, with the same lookup counts,
// and a new lookup finds the node recovered instead of making another.
TEST(NodeJournal, AnInodeTableComesBackFromItUnderTheSameNodeIds) {
  testing::TempDir dir("ringfuse-node-journal");
  const std::string source = dir.path() + "/source";
  ASSERT_EQ(::mkdir(source.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((source + "/sub").c_str(), 0755), 0);
  const internal::UniqueFd file(::open((source + "/sub/file").c_str(), O_CREAT | O_WRONLY, 0644));
  ASSERT_TRUE(file.valid());
  absl::StatusOr<std::unique_ptr<NodeJournal>> journal = NodeJournal::Create();
  ASSERT_TRUE(journal.ok());
  uint64_t sub_id = 0, file_id = 0;
  {
    InodeTable table(internal::UniqueFd(::open(source.c_str(), O_PATH | O_DIRECTORY)));
    if (!table.reopens_by_handle()) GTEST_SKIP() << "file handles cannot be opened here";
    table.RecordNodesIn(journal->get());
    Found sub, found;
    ASSERT_EQ(table.Lookup(InodeTable::kRootNodeId, "sub", sub), 0);
    ASSERT_EQ(table.Lookup(sub.inode->nodeid, "file", found), 0);
    ASSERT_EQ(table.Lookup(sub.inode->nodeid, "file", found), 0);
    sub_id = sub.inode->nodeid;
    file_id = found.inode->nodeid;
  }
  InodeTable next(internal::UniqueFd(::open(source.c_str(), O_PATH | O_DIRECTORY)));
  std::unique_ptr<NodeJournal> adopted = AdoptCopyOf(**journal);
  NodeJournal::Recovery recovery = adopted->Recover();
  EXPECT_TRUE(recovery.complete);
  ASSERT_TRUE(next.RestoreRecorded(std::move(recovery.nodes)).ok());
  next.RecordNodesIn(adopted.get());
  EXPECT_EQ(next.LookupCount(sub_id), 1u);
  EXPECT_EQ(next.LookupCount(file_id), 2u);
  const std::shared_ptr<const Inode> reopened = next.Get(file_id);
  ASSERT_NE(reopened, nullptr) << std::strerror(errno);
  struct stat expected {
  }, got{};
  ASSERT_EQ(::fstat(file.get(), &expected), 0);
  ASSERT_EQ(::fstat(reopened->path.get(), &got), 0);
  EXPECT_EQ(got.st_ino, expected.st_ino);
  Found again;
  ASSERT_EQ(next.Lookup(sub_id, "file", again), 0);
  EXPECT_EQ(again.inode->nodeid, file_id) << "a new node for an inode the journal had";
  EXPECT_EQ(next.LookupCount(file_id), 3u);
  // The lookup counted in the journal too, for the crash after this one.
  NodeJournal::Recovery third = AdoptCopyOf(*adopted)->Recover();
  bool counted = false;
  for (const SavedNode& node : third.nodes) counted |= node.nodeid == file_id && node.lookups == 3;
  EXPECT_TRUE(counted);
}

// Records no daemon could have written (node id 0, the root's, one near 2^64 that would wrap the
// next node id round) are dropped, and the rest of the table still comes back.
TEST(NodeJournal, RecordsWithImpossibleNodeIdsAreDroppedNotTheRecovery) {
  testing::TempDir dir("ringfuse-node-journal");
  const std::string source = dir.path() + "/source";
  ASSERT_EQ(::mkdir(source.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((source + "/sub").c_str(), 0755), 0);
  std::vector<SavedNode> nodes;
  uint64_t sub_id = 0;
  {
    InodeTable table(internal::UniqueFd(::open(source.c_str(), O_PATH | O_DIRECTORY)));
    if (!table.reopens_by_handle()) GTEST_SKIP() << "file handles cannot be opened here";
    absl::StatusOr<std::unique_ptr<NodeJournal>> journal = NodeJournal::Create();
    ASSERT_TRUE(journal.ok());
    table.RecordNodesIn(journal->get());
    Found sub;
    ASSERT_EQ(table.Lookup(InodeTable::kRootNodeId, "sub", sub), 0);
    sub_id = sub.inode->nodeid;
    nodes = AdoptCopyOf(**journal)->Recover().nodes;
  }
  ASSERT_EQ(nodes.size(), 1u);
  for (const uint64_t impossible : {uint64_t{0}, InodeTable::kRootNodeId, ~uint64_t{0}}) {
    SavedNode forged = nodes[0];
    forged.nodeid = impossible;
    nodes.push_back(forged);
  }
  InodeTable next(internal::UniqueFd(::open(source.c_str(), O_PATH | O_DIRECTORY)));
  const absl::Status restored = next.RestoreRecorded(std::move(nodes));
  ASSERT_TRUE(restored.ok()) << restored;
  EXPECT_EQ(next.LookupCount(sub_id), 1u);
  Found fresh;
  ASSERT_EQ(::mkdir((source + "/new").c_str(), 0755), 0);
  ASSERT_EQ(next.Lookup(InodeTable::kRootNodeId, "new", fresh), 0);
  EXPECT_EQ(fresh.inode->nodeid, sub_id + 1) << "the next node id was not wrapped round";
}

}  // namespace
}  // namespace ringfuse::daemon
