// The passthrough daemon's read-only core through a real mount, over every transport: what a
// client sees is what SOURCE holds.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include "daemon/fs/passthrough_fs.h"
#include "gtest/gtest.h"
#include "tests/daemon/test_files.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::ReadFile;
using ringfuse::testing::ServedMount;
using ringfuse::testing::TempDir;
using ringfuse::testing::WriteFile;

class PassthroughRead : public ringfuse::testing::TransportTest {
 protected:
  void SetUp() override {
    TransportTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_FALSE(source_.path().empty()) << std::strerror(errno);
    std::mt19937 random(7);
    contents_.resize(1 << 20);
    for (char& c : contents_) c = static_cast<char>(random());
    WriteFile(source_.path() + "/data", contents_);
    std::filesystem::create_directory(source_.path() + "/sub");
    std::filesystem::create_symlink("../data", source_.path() + "/sub/link");
    fs_ = std::make_unique<PassthroughFs>(
        base::UniqueFd(::open(source_.path().c_str(), O_PATH | O_CLOEXEC)), DaemonOptions{});
    absl::StatusOr<std::unique_ptr<ServedMount>> mount = ServedMount::Start(*fs_, GetParam());
    ASSERT_TRUE(mount.ok()) << mount.status();
    mount_ = std::move(*mount);
  }
  void TearDown() override { mount_.reset(); }

  TempDir source_{"ringfuse-source"};
  std::string contents_;
  std::unique_ptr<PassthroughFs> fs_;
  std::unique_ptr<ServedMount> mount_;
};

TEST_P(PassthroughRead, ReadsBackTheSourceByteForByte) {
  const std::string read = ReadFile(mount_->Path("data"));
  EXPECT_EQ(read.size(), contents_.size());
  EXPECT_TRUE(read == contents_);
}

TEST_P(PassthroughRead, AttributesAndSymlinksComeFromTheSource) {
  struct stat through_mount, in_source;
  ASSERT_EQ(::lstat(mount_->Path("sub/link").c_str(), &through_mount), 0) << std::strerror(errno);
  ASSERT_EQ(::lstat((source_.path() + "/sub/link").c_str(), &in_source), 0);
  EXPECT_TRUE(S_ISLNK(through_mount.st_mode));
  EXPECT_EQ(through_mount.st_ino, in_source.st_ino);
  char target[64] = {};
  ASSERT_EQ(::readlink(mount_->Path("sub/link").c_str(), target, sizeof(target)), 7);
  EXPECT_EQ(std::string(target), "../data");
  EXPECT_EQ(::access(mount_->Path("missing").c_str(), F_OK), -1);
  EXPECT_EQ(errno, ENOENT);
}

TEST_P(PassthroughRead, StatfsIsTheSourcesFilesystem) {
  struct statvfs through_mount, in_source;
  ASSERT_EQ(::statvfs(mount_->root().c_str(), &through_mount), 0) << std::strerror(errno);
  ASSERT_EQ(::statvfs(source_.path().c_str(), &in_source), 0);
  EXPECT_EQ(through_mount.f_blocks, in_source.f_blocks);
}

TEST_P(PassthroughRead, ListsEveryEntryOfALargeDirectory) {
  std::set<std::string> expected = {".", ".."};
  for (int i = 0; i < 500; ++i) {
    const std::string name = "entry-" + std::to_string(i);
    WriteFile(source_.path() + "/sub/" + name, std::to_string(i));
    expected.insert(name);
  }
  expected.insert("link");
  DIR* dir = ::opendir(mount_->Path("sub").c_str());
  ASSERT_NE(dir, nullptr) << std::strerror(errno);
  std::multiset<std::string> listed;
  while (dirent* entry = ::readdir(dir)) listed.insert(entry->d_name);
  ::closedir(dir);
  EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()), expected);
  EXPECT_EQ(listed.size(), expected.size()) << "an entry was listed twice";
  std::ifstream file(mount_->Path("sub/entry-321"));
  std::string text;
  file >> text;
  EXPECT_EQ(text, "321");
}

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughRead, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
