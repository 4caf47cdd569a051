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

#include "daemon/passthrough_fs.h"
#include "gtest/gtest.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::ServedMount;

class PassthroughRead : public ringfuse::testing::TransportTest {
 protected:
  void SetUp() override {
    TransportTest::SetUp();
    if (IsSkipped()) return;
    char dir_template[] = "/tmp/ringfuse-source.XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr);
    source_ = dir_template;
    std::mt19937 random(7);
    contents_.resize(1 << 20);
    for (char& c : contents_) c = static_cast<char>(random());
    std::ofstream(source_ + "/data", std::ios::binary) << contents_;
    std::filesystem::create_directory(source_ + "/sub");
    std::filesystem::create_symlink("../data", source_ + "/sub/link");
    fs_ = std::make_unique<PassthroughFs>(UniqueFd(::open(source_.c_str(), O_PATH | O_CLOEXEC)),
                                          DaemonOptions{});
    absl::StatusOr<std::unique_ptr<ServedMount>> mount = ServedMount::Start(*fs_, GetParam());
    ASSERT_TRUE(mount.ok()) << mount.status();
    mount_ = std::move(*mount);
  }
  void TearDown() override {
    mount_.reset();
    if (!source_.empty()) std::filesystem::remove_all(source_);
  }

  std::string source_;
  std::string contents_;
  std::unique_ptr<PassthroughFs> fs_;
  std::unique_ptr<ServedMount> mount_;
};

TEST_P(PassthroughRead, ReadsBackTheSourceByteForByte) {
  std::ifstream file(mount_->Path("data"), std::ios::binary);
  const std::string read((std::istreambuf_iterator<char>(file)), {});
  EXPECT_EQ(read.size(), contents_.size());
  EXPECT_TRUE(read == contents_);
}

TEST_P(PassthroughRead, AttributesAndSymlinksComeFromTheSource) {
  struct stat through_mount, in_source;
  ASSERT_EQ(::lstat(mount_->Path("sub/link").c_str(), &through_mount), 0) << std::strerror(errno);
  ASSERT_EQ(::lstat((source_ + "/sub/link").c_str(), &in_source), 0);
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
  ASSERT_EQ(::statvfs(source_.c_str(), &in_source), 0);
  EXPECT_EQ(through_mount.f_blocks, in_source.f_blocks);
}

TEST_P(PassthroughRead, ListsEveryEntryOfALargeDirectory) {
  std::set<std::string> expected = {".", ".."};
  for (int i = 0; i < 500; ++i) {
    const std::string name = "entry-" + std::to_string(i);
    std::ofstream(source_ + "/sub/" + name) << i;
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
