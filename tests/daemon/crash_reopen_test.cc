// Files open at a crash, reopened from the open-file journal: a record reopens only its own
// node's inode, whatever handle it carries.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "daemon/open_file_journal.h"
#include "daemon/passthrough_fs.h"
#include "gtest/gtest.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::WriteFile;

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
        internal::UniqueFd(::open(source_.c_str(), O_PATH | O_CLOEXEC)), options);
    Found found;
    ASSERT_EQ(fs_->inodes().Lookup(InodeTable::kRootNodeId, "mine", found), 0);
    node_ = found.inode->nodeid;
    absl::StatusOr<std::unique_ptr<OpenFileJournal>> journal = OpenFileJournal::Create();
    ASSERT_TRUE(journal.ok()) << journal.status();
    journal_ = std::move(*journal);
  }

  // The handle of the file at `path`, as the journal records them.
  std::string HandleOf(const std::string& path) {
    const internal::UniqueFd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
    return fs_->inodes().handles().HandleOf(fd.get());
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
  EXPECT_EQ(fs_->ReopenAfterCrash(*journal_), 1u);
}

// A record whose handle reaches another inode of the filesystem (here outside SOURCE) is not
// opened as root for the node's fh: it is dropped from the journal.
TEST_F(CrashReopen, ARecordWhoseHandleNamesAnotherInodeIsDropped) {
  const std::string handle = HandleOf(top_.path() + "/secret");
  ASSERT_FALSE(handle.empty()) << "no handles on this filesystem";
  journal_->Opened(7, node_, handle, O_RDONLY);
  journal_->Opened(8, 12345, HandleOf(source_ + "/mine"), O_RDONLY);  // no such node
  EXPECT_EQ(fs_->ReopenAfterCrash(*journal_), 0u);
  EXPECT_TRUE(journal_->Recover().empty()) << "the refused records stay in the journal";
}

}  // namespace
}  // namespace ringfuse::daemon
