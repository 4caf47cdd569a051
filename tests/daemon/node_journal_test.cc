// The node journal a kept ringfused writes to a memfd: the nodes and lookup counts one process
// records are what the next finds through its own copy of the memfd, dropped nodes gone; a node
// that could not be recorded makes the recovery incomplete while it lives; and an inode table fed
// by the journal comes back after a "crash" with the same node ids, reaching the same inodes.
#include "daemon/crash/node_journal.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "daemon/inodes/inode_table.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

std::unique_ptr<NodeJournal> AdoptCopyOf(const NodeJournal& journal) {
  absl::StatusOr<std::unique_ptr<NodeJournal>> adopted =
      NodeJournal::Adopt(base::UniqueFd(::fcntl(journal.fd(), F_DUPFD_CLOEXEC, 0)));
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
  base::UniqueFd other(::memfd_create("not a journal", MFD_CLOEXEC));
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
  const base::UniqueFd file(::open((source + "/sub/file").c_str(), O_CREAT | O_WRONLY, 0644));
  ASSERT_TRUE(file.valid());
  absl::StatusOr<std::unique_ptr<NodeJournal>> journal = NodeJournal::Create();
  ASSERT_TRUE(journal.ok());
  uint64_t sub_id = 0, file_id = 0;
  {
    InodeTable table(base::UniqueFd(::open(source.c_str(), O_PATH | O_DIRECTORY)));
    if (!table.reopens_by_handle()) GTEST_SKIP() << "file handles cannot be opened here";
    table.RecordNodesIn(journal->get());
    Found sub, found;
    ASSERT_EQ(table.Lookup(InodeTable::kRootNodeId, "sub", sub), base::Errno());
    ASSERT_EQ(table.Lookup(sub.inode->nodeid, "file", found), base::Errno());
    ASSERT_EQ(table.Lookup(sub.inode->nodeid, "file", found), base::Errno());
    sub_id = sub.inode->nodeid;
    file_id = found.inode->nodeid;
  }
  InodeTable next(base::UniqueFd(::open(source.c_str(), O_PATH | O_DIRECTORY)));
  std::unique_ptr<NodeJournal> adopted = AdoptCopyOf(**journal);
  NodeJournal::Recovery recovery = adopted->Recover();
  EXPECT_TRUE(recovery.complete);
  ASSERT_TRUE(next.RestoreRecorded(std::move(recovery.nodes)).ok());
  next.RecordNodesIn(adopted.get());
  EXPECT_EQ(next.LookupCount(sub_id), 1u);
  EXPECT_EQ(next.LookupCount(file_id), 2u);
  const base::ErrnoOr<std::shared_ptr<const Inode>> reopened = next.Get(file_id);
  ASSERT_TRUE(reopened.ok()) << reopened.error();
  struct stat expected {
  }, got{};
  ASSERT_EQ(::fstat(file.get(), &expected), 0);
  ASSERT_EQ(::fstat((*reopened)->path.get(), &got), 0);
  EXPECT_EQ(got.st_ino, expected.st_ino);
  Found again;
  ASSERT_EQ(next.Lookup(sub_id, "file", again), base::Errno());
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
    InodeTable table(base::UniqueFd(::open(source.c_str(), O_PATH | O_DIRECTORY)));
    if (!table.reopens_by_handle()) GTEST_SKIP() << "file handles cannot be opened here";
    absl::StatusOr<std::unique_ptr<NodeJournal>> journal = NodeJournal::Create();
    ASSERT_TRUE(journal.ok());
    table.RecordNodesIn(journal->get());
    Found sub;
    ASSERT_EQ(table.Lookup(InodeTable::kRootNodeId, "sub", sub), base::Errno());
    sub_id = sub.inode->nodeid;
    nodes = AdoptCopyOf(**journal)->Recover().nodes;
  }
  ASSERT_EQ(nodes.size(), 1u);
  for (const uint64_t impossible : {uint64_t{0}, InodeTable::kRootNodeId, ~uint64_t{0}}) {
    SavedNode forged = nodes[0];
    forged.nodeid = impossible;
    nodes.push_back(forged);
  }
  InodeTable next(base::UniqueFd(::open(source.c_str(), O_PATH | O_DIRECTORY)));
  const absl::Status restored = next.RestoreRecorded(std::move(nodes));
  ASSERT_TRUE(restored.ok()) << restored;
  EXPECT_EQ(next.LookupCount(sub_id), 1u);
  Found fresh;
  ASSERT_EQ(::mkdir((source + "/new").c_str(), 0755), 0);
  ASSERT_EQ(next.Lookup(InodeTable::kRootNodeId, "new", fresh), base::Errno());
  EXPECT_EQ(fresh.inode->nodeid, sub_id + 1) << "the next node id was not wrapped round";
}

// What a recorder is told of the inode at `path` (not followed), its handle made by `handles`.
struct Record {
  dev_t dev = 0;
  ino_t ino = 0;
  mode_t type = 0;
  std::string handle;
};
Record RecordOf(InodeHandles& handles, const std::string& path) {
  const base::UniqueFd fd(::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  EXPECT_EQ(::fstat(fd.get(), &st), 0) << path << ": " << std::strerror(errno);
  return Record{st.st_dev, st.st_ino, st.st_mode & S_IFMT, handles.HandleOf(fd.get())};
}

// Writes a record no daemon made: node `nodeid` is the inode `record` names.
void Forge(NodeJournal& journal, uint64_t nodeid, const Record& record) {
  ASSERT_FALSE(record.handle.empty()) << "no handle to forge with";
  ASSERT_TRUE(journal.Added(nodeid, record.dev, record.ino, record.type, record.handle, 1));
}

// Whether node `nodeid` of `table` is served: reopened, the inode at `path`.
::testing::AssertionResult Serves(InodeTable& table, uint64_t nodeid, const std::string& path) {
  const base::ErrnoOr<std::shared_ptr<const Inode>> inode = table.Get(nodeid);
  if (!inode.ok()) {
    return ::testing::AssertionFailure() << "node " << nodeid << ": " << inode.error();
  }
  struct stat expected {
  }, got{};
  if (::lstat(path.c_str(), &expected) != 0 || ::fstat((*inode)->path.get(), &got) != 0 ||
      got.st_dev != expected.st_dev || got.st_ino != expected.st_ino) {
    return ::testing::AssertionFailure() << "node " << nodeid << " is not " << path;
  }
  return ::testing::AssertionSuccess();
}
::testing::AssertionResult IsStale(InodeTable& table, uint64_t nodeid) {
  const base::ErrnoOr<std::shared_ptr<const Inode>> inode = table.Get(nodeid);
  if (inode.ok()) return ::testing::AssertionFailure() << "node " << nodeid << " is served";
  if (inode.error() != base::Errno(ESTALE)) return ::testing::AssertionFailure() << inode.error();
  return ::testing::AssertionSuccess();
}

// A dead daemon's table, recording, and the one that recovers from its journal.
class RecoveredTable : public ::testing::Test {
 protected:
  static constexpr uint64_t kForgedFile = 1000, kForgedDir = 1001, kForgedOther = 1002;

  void SetUp() override {
    ASSERT_FALSE(top_.path().empty());
    ASSERT_EQ(::mkdir(source_.c_str(), 0755), 0);
    absl::StatusOr<std::unique_ptr<NodeJournal>> journal = NodeJournal::Create();
    ASSERT_TRUE(journal.ok()) << journal.status();
    journal_ = std::move(*journal);
    ASSERT_NO_FATAL_FAILURE(Start());
  }

  // The daemon that records, serving SOURCE as this thread sees it.
  void Start() {
    dead_ = std::make_unique<InodeTable>(OpenSource());
    if (!dead_->reopens_by_handle()) GTEST_SKIP() << "file handles cannot be opened here";
    dead_->RecordNodesIn(journal_.get());
  }

  base::UniqueFd OpenSource() {
    return base::UniqueFd(::open(source_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }
  uint64_t NodeOf(InodeTable& table, uint64_t parent, std::string_view name) {
    Found found;
    const base::Errno error = table.Lookup(parent, name, found);
    EXPECT_TRUE(error.ok()) << name << ": " << error;
    return error.ok() ? found.inode->nodeid : 0;
  }
  // The dead daemon goes without a word; the next recovers from what its journal holds.
  void Crash() {
    dead_.reset();
    next_ = std::make_unique<InodeTable>(OpenSource());
    adopted_ = AdoptCopyOf(*journal_);
    ASSERT_NE(adopted_, nullptr);
    const absl::Status restored = next_->RestoreRecorded(adopted_->Recover().nodes);
    ASSERT_TRUE(restored.ok()) << restored;
    next_->RecordNodesIn(adopted_.get());
  }

  testing::TempDir top_{"ringfuse-node-journal"};
  const std::string source_ = top_.path() + "/source";
  std::unique_ptr<NodeJournal> journal_;
  std::unique_ptr<InodeTable> dead_, next_;
  std::unique_ptr<NodeJournal> adopted_;
};

// SOURCE is a directory of a filesystem that holds more: records of a file and a directory beside
// SOURCE, with their real handles and numbers, come back as nodes that answer ESTALE, and stay
// so whatever is looked up; the daemon's own records, in SOURCE's top and below, are served at
// once.
TEST_F(RecoveredTable, RecordsOfInodesOutsideSourceAreNotServed) {
  const std::string outside = top_.path() + "/outside";
  std::filesystem::create_directories(outside + "/dir");
  std::filesystem::create_directories(source_ + "/sub/deeper");
  WriteFile(outside + "/secret", "outside SOURCE\n");
  WriteFile(source_ + "/top", "in SOURCE\n");
  WriteFile(source_ + "/sub/deeper/file", "in SOURCE\n");
  const uint64_t top = NodeOf(*dead_, InodeTable::kRootNodeId, "top");
  const uint64_t sub = NodeOf(*dead_, InodeTable::kRootNodeId, "sub");
  const uint64_t deeper = NodeOf(*dead_, sub, "deeper");
  const uint64_t file = NodeOf(*dead_, deeper, "file");
  ASSERT_NO_FATAL_FAILURE(
      Forge(*journal_, kForgedFile, RecordOf(dead_->handles(), outside + "/secret")));
  ASSERT_NO_FATAL_FAILURE(
      Forge(*journal_, kForgedDir, RecordOf(dead_->handles(), outside + "/dir")));
  ASSERT_NO_FATAL_FAILURE(Crash());

  EXPECT_TRUE(IsStale(*next_, kForgedFile));
  EXPECT_TRUE(IsStale(*next_, kForgedDir));
  Found found;
  EXPECT_EQ(next_->Lookup(kForgedDir, "anything", found), base::Errno(ESTALE));
  // The control: the daemon's own records, served without a lookup.
  EXPECT_TRUE(Serves(*next_, top, source_ + "/top"));
  EXPECT_TRUE(Serves(*next_, sub, source_ + "/sub"));
  EXPECT_TRUE(Serves(*next_, deeper, source_ + "/sub/deeper"));
  EXPECT_TRUE(Serves(*next_, file, source_ + "/sub/deeper/file"));
  // Every name of SOURCE looked up: no lookup reaches the outside inodes.
  EXPECT_EQ(NodeOf(*next_, deeper, "file"), file);
  EXPECT_EQ(NodeOf(*next_, InodeTable::kRootNodeId, "top"), top);
  EXPECT_TRUE(IsStale(*next_, kForgedFile));
  EXPECT_TRUE(IsStale(*next_, kForgedDir));
}

// A file of SOURCE moved behind the mount's back, while the daemon was dead, to a directory the
// kernel never looked at: no directory recovered names it, so its node answers ESTALE, and the
// kernel's lookup of its new name brings it back under its own id (the handle it makes is the
// record's). Fewer rights, for a while, never more.
TEST_F(RecoveredTable, ANodeNotShownInSourceComesBackByALookupOfItsInode) {
  std::filesystem::create_directories(source_ + "/known");
  std::filesystem::create_directories(source_ + "/unknown");
  WriteFile(source_ + "/known/file", "in SOURCE\n");
  const uint64_t known = NodeOf(*dead_, InodeTable::kRootNodeId, "known");
  const uint64_t file = NodeOf(*dead_, known, "file");
  std::filesystem::rename(source_ + "/known/file", source_ + "/unknown/moved");
  ASSERT_NO_FATAL_FAILURE(Crash());
  EXPECT_TRUE(Serves(*next_, known, source_ + "/known"));
  EXPECT_TRUE(IsStale(*next_, file));
  const uint64_t unknown = NodeOf(*next_, InodeTable::kRootNodeId, "unknown");
  EXPECT_EQ(NodeOf(*next_, unknown, "moved"), file);
  EXPECT_TRUE(Serves(*next_, file, source_ + "/unknown/moved"));
  EXPECT_EQ(next_->LookupCount(file), 2u);
}

// Another filesystem, mounted where only this test's thread sees it: a tmpfs at <top>/other,
// whose <top>/other/in is bound onto SOURCE/mnt. The daemon crosses into it as a lookup does,
// so its handles of that mount reach all of that tmpfs, <top>/other/out too. Records of out's
// file and directory through the bind mount, and of a file by the tmpfs's own mount, are never
// served; the records of SOURCE/mnt and what is in it come back by lookups through SOURCE.
TEST_F(RecoveredTable, RecordsOfAnotherFilesystemAreServedOnlyWhereALookupReachesThem) {
  const std::string other = top_.path() + "/other";
  ASSERT_EQ(::mkdir(other.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((source_ + "/mnt").c_str(), 0755), 0);
  std::thread([&] {
    ASSERT_EQ(::unshare(CLONE_NEWNS), 0) << "needs CAP_SYS_ADMIN: " << std::strerror(errno);
    ASSERT_EQ(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr), 0);
    ASSERT_EQ(::mount("tmpfs", other.c_str(), "tmpfs", 0, "mode=0755"), 0) << std::strerror(errno);
    std::filesystem::create_directories(other + "/in");
    std::filesystem::create_directories(other + "/out/dir");
    WriteFile(other + "/in/inside", "in SOURCE/mnt\n");
    WriteFile(other + "/out/secret", "outside SOURCE\n");
    ASSERT_EQ(
        ::mount((other + "/in").c_str(), (source_ + "/mnt").c_str(), nullptr, MS_BIND, nullptr), 0)
        << std::strerror(errno);
    ASSERT_NO_FATAL_FAILURE(Start());  // its SOURCE, where the mounts are
    const uint64_t mnt = NodeOf(*dead_, InodeTable::kRootNodeId, "mnt");
    const uint64_t inside = NodeOf(*dead_, mnt, "inside");
    // out's inodes through the bind mount, as the daemon's handles of that mount reach them.
    const base::UniqueFd bound(
        ::open((source_ + "/mnt").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    auto through_bind = [&](const std::string& path) {
      const Record direct = RecordOf(dead_->handles(), path);
      struct {
        struct file_handle header;
        unsigned char bytes[MAX_HANDLE_SZ];
      } raw{};
      raw.header.handle_bytes = MAX_HANDLE_SZ;
      int mount_id = 0;
      EXPECT_EQ(::name_to_handle_at(AT_FDCWD, path.c_str(), &raw.header, &mount_id, 0), 0);
      const base::UniqueFd fd(::open_by_handle_at(bound.get(), &raw.header, O_PATH));
      EXPECT_TRUE(fd.valid()) << std::strerror(errno);
      return Record{direct.dev, direct.ino, direct.type, dead_->handles().HandleOf(fd.get())};
    };
    ASSERT_NO_FATAL_FAILURE(Forge(*journal_, kForgedFile, through_bind(other + "/out/secret")));
    ASSERT_NO_FATAL_FAILURE(Forge(*journal_, kForgedDir, through_bind(other + "/out/dir")));
    const base::UniqueFd other_top(::open(other.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    InodeHandles own_mount(other_top.get());
    ASSERT_NO_FATAL_FAILURE(
        Forge(*journal_, kForgedOther, RecordOf(own_mount, other + "/out/secret")));
    ASSERT_NO_FATAL_FAILURE(Crash());

    // SOURCE/mnt's mount is not known before a lookup crosses into it.
    EXPECT_TRUE(IsStale(*next_, mnt));
    EXPECT_TRUE(IsStale(*next_, inside));
    EXPECT_EQ(NodeOf(*next_, InodeTable::kRootNodeId, "mnt"), mnt);
    EXPECT_EQ(NodeOf(*next_, mnt, "inside"), inside);
    EXPECT_TRUE(Serves(*next_, inside, source_ + "/mnt/inside"));
    // Now that the daemon opens handles of the bind mount, out's would reach out: they do not.
    EXPECT_TRUE(IsStale(*next_, kForgedFile));
    EXPECT_TRUE(IsStale(*next_, kForgedDir));
    EXPECT_TRUE(IsStale(*next_, kForgedOther));
    // Its fds close before the thread and its mount namespace go.
    next_.reset();
  }).join();
}

}  // namespace
}  // namespace ringfuse::daemon
