// Files open at a crash, reopened from the open-file journal: a record reopens only its own
// node's inode, whatever handle it carries, and only a node the node journal shows in SOURCE.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "daemon/crash/incarnation.h"
#include "daemon/crash/node_journal.h"
#include "daemon/crash/open_file_journal.h"
#include "daemon/crash/reopen_after_crash.h"
#include "daemon/fs/passthrough_fs.h"
#include "gtest/gtest.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::WriteFile;

// The daemon after the first crash: fhs from 1 << 40 on are its own to give.
constexpr uint32_t kIncarnation = 1;
constexpr uint64_t kFirstOwnFh = uint64_t{kIncarnation} << 40;

class CrashReopen : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(top_.path().empty());
    source_ = top_.path() + "/source";
    ASSERT_EQ(::mkdir(source_.c_str(), 0755), 0);
    WriteFile(source_ + "/mine", "the node's file\n");
    WriteFile(top_.path() + "/secret", "outside SOURCE\n");
    DaemonOptions options;
    options.source = source_;
    fs_ = std::make_unique<PassthroughFs>(
        base::UniqueFd(::open(source_.c_str(), O_PATH | O_CLOEXEC)), options);
    Found found;
    ASSERT_EQ(fs_->inodes().Lookup(InodeTable::kRootNodeId, "mine", found), base::Errno());
    node_ = found.inode->nodeid;  // as the dead daemon numbered it
    ASSERT_TRUE(ContinueAfterCrash(*fs_, kIncarnation).ok());
    absl::StatusOr<std::unique_ptr<OpenFileJournal>> journal = OpenFileJournal::Create();
    ASSERT_TRUE(journal.ok()) << journal.status();
    journal_ = std::move(*journal);
  }

  // The handle of the file at `path`, as the journal records them.
  std::string HandleOf(const std::string& path) {
    const base::UniqueFd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
    return fs_->inodes().handles().HandleOf(fd.get());
  }

  // What the daemon after the crash does with the journal: reopens into `fs` what it names.
  size_t Reopen(PassthroughFs& fs) {
    return ReopenAfterCrash(*journal_, fs.parts().inodes, fs.parts().open);
  }

  ringfuse::testing::TempDir top_{"ringfuse-crash-reopen"};
  std::string source_;
  std::unique_ptr<PassthroughFs> fs_;
  uint64_t node_ = 0;
  std::unique_ptr<OpenFileJournal> journal_;
};

// The control: a record of the node's own file is reopened.
TEST_F(CrashReopen, ARecordOfTheNodesFileIsReopened) {
  const std::string handle = HandleOf(source_ + "/mine");
  ASSERT_FALSE(handle.empty()) << "no handles on this filesystem";
  journal_->Opened(7, node_, handle, O_RDONLY);
  EXPECT_EQ(Reopen(*fs_), 1u);
}

// A record whose handle reaches another inode of the filesystem (here outside SOURCE) is not
// opened as root for the node's fh: it is dropped from the journal.
TEST_F(CrashReopen, ARecordWhoseHandleNamesAnotherInodeIsDropped) {
  const std::string handle = HandleOf(top_.path() + "/secret");
  ASSERT_FALSE(handle.empty()) << "no handles on this filesystem";
  journal_->Opened(7, node_, handle, O_RDONLY);
  journal_->Opened(8, 12345, HandleOf(source_ + "/mine"), O_RDONLY);  // no such node
  EXPECT_EQ(Reopen(*fs_), 0u);
  EXPECT_TRUE(journal_->Recover().empty()) << "the refused records stay in the journal";
}

// A node journal whose record makes a node of the file beside SOURCE, with its real handle and
// numbers, and an open-file record of that node with the same handle: the next daemon does not
// open it as root (its node answers ESTALE), while the daemon's own node and open file come back.
TEST_F(CrashReopen, AFileOutsideSourceNamedByTheNodeJournalIsNotReopened) {
  constexpr uint64_t kForged = 1000;
  absl::StatusOr<std::unique_ptr<NodeJournal>> nodes = NodeJournal::Create();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  auto record = [&](uint64_t nodeid, const std::string& path) {
    struct stat st {};
    ASSERT_EQ(::lstat(path.c_str(), &st), 0);
    const std::string handle = HandleOf(path);
    ASSERT_FALSE(handle.empty()) << "no handles on this filesystem";
    ASSERT_TRUE((*nodes)->Added(nodeid, st.st_dev, st.st_ino, st.st_mode & S_IFMT, handle, 1));
    journal_->Opened(nodeid + 10, nodeid, handle, O_RDWR);
  };
  ASSERT_NO_FATAL_FAILURE(record(node_, source_ + "/mine"));
  ASSERT_NO_FATAL_FAILURE(record(kForged, top_.path() + "/secret"));
  DaemonOptions options;
  options.source = source_;
  PassthroughFs next(base::UniqueFd(::open(source_.c_str(), O_PATH | O_CLOEXEC)), options);
  ASSERT_TRUE(ContinueAfterCrash(next, kIncarnation).ok());
  const absl::Status restored = next.inodes().RestoreRecorded((*nodes)->Recover().nodes);
  ASSERT_TRUE(restored.ok()) << restored;
  EXPECT_EQ(Reopen(next), 1u) << "the file outside SOURCE was opened";
  EXPECT_EQ(next.inodes().Get(kForged).error(), base::Errno(ESTALE));
  EXPECT_TRUE(next.inodes().Get(node_).ok());
}

// A FIFO is no file the daemon opens: a record of one, which no daemon wrote, is dropped
// instead of blocking the recovery in open(2) for good.
TEST_F(CrashReopen, ARecordOfAFifoIsDroppedNotOpened) {
  ASSERT_EQ(::mkfifo((source_ + "/fifo").c_str(), 0644), 0);
  Found found;
  ASSERT_EQ(fs_->inodes().Lookup(InodeTable::kRootNodeId, "fifo", found), base::Errno());
  journal_->Opened(9, found.inode->nodeid, HandleOf(source_ + "/fifo"), O_RDONLY);
  EXPECT_EQ(Reopen(*fs_), 0u);
  EXPECT_TRUE(journal_->Recover().empty());
}

// An fh this daemon will give (from kFirstOwnFh on) is no dead daemon's: taken, a later open
// would be given it again, and two opens would share one fh.
TEST_F(CrashReopen, ARecordOfAnFhNotYetGivenIsDropped) {
  const std::string handle = HandleOf(source_ + "/mine");
  ASSERT_FALSE(handle.empty()) << "no handles on this filesystem";
  journal_->Opened(kFirstOwnFh + 1, node_, handle, O_RDONLY);
  journal_->Opened(~uint64_t{0}, node_, handle, O_RDONLY);
  journal_->Opened(kFirstOwnFh - 1, node_, handle, O_RDONLY);  // the control: a dead daemon's
  EXPECT_EQ(Reopen(*fs_), 1u);
}

}  // namespace
}  // namespace ringfuse::daemon
