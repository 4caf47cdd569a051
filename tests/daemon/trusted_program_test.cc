// OpenTrustedProgram: the program a restart starts is refused, with the path at fault and why,
// when anyone but root and this process's user could replace it or a directory on its way; a
// program where only root writes is opened. Run as root, the tests' user.
#include "daemon/handover/trusted_program.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::TempDir;
using ringfuse::testing::WriteFile;
using ::testing::HasSubstr;

constexpr uid_t kStranger = 4242;

class TrustedProgram : public ::testing::Test {
 protected:
  void SetUp() override {
    // Not under /tmp, which everyone may write: /run is root's alone.
    ASSERT_FALSE(dir_.path().empty()) << "mkdtemp in /run: " << std::strerror(errno);
    ASSERT_EQ(::geteuid(), 0u) << "these tests give files to other users";
  }

  // A program file at `path`, mode `mode`, in directories made 0755 as needed.
  static void MakeProgram(const std::string& path, mode_t mode) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    WriteFile(path, "#!/bin/sh\n");
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
  }

  static std::string RefusalOf(const std::string& program) {
    const absl::StatusOr<base::UniqueFd> opened = OpenTrustedProgram(program);
    EXPECT_FALSE(opened.ok()) << program << " was accepted";
    return opened.ok() ? "" : std::string(opened.status().message());
  }

  TempDir dir_{"ringfuse-trusted-program", "/run"};
};

// The negative control for each refusal below: root's file in root's 0755 directories.
TEST_F(TrustedProgram, OpensAProgramOnlyRootCanReplace) {
  const std::string program = dir_.path() + "/bin/ringfused";
  MakeProgram(program, 0755);
  const absl::StatusOr<base::UniqueFd> opened = OpenTrustedProgram(program);
  ASSERT_TRUE(opened.ok()) << opened.status();
  struct stat by_fd {
  }, by_path{};
  ASSERT_EQ(::fstat(opened->get(), &by_fd), 0);
  ASSERT_EQ(::stat(program.c_str(), &by_path), 0);
  EXPECT_EQ(by_fd.st_ino, by_path.st_ino);
  EXPECT_EQ(::fcntl(opened->get(), F_GETFD), FD_CLOEXEC);
}

TEST_F(TrustedProgram, RefusesAProgramUnderADirectoryEveryoneMayWrite) {
  const std::string program = dir_.path() + "/open/ringfused";
  MakeProgram(program, 0755);
  ASSERT_EQ(::chmod((dir_.path() + "/open").c_str(), 0777), 0);
  EXPECT_EQ(RefusalOf(program),
            "will not run " + program + ": " + dir_.path() +
                "/open is writable by everyone; a root daemon runs no program that anyone else "
                "could replace");
}

// The sticky bit stops others removing or renaming names they do not own: a program under /tmp
// in root's own directory is root's to replace alone. A name there of another user's is not,
// nor a link of theirs (they may point it elsewhere).
TEST_F(TrustedProgram, PassesAStickyDirectoryOnlyThroughNamesOfItsOwn) {
  const TempDir in_tmp("ringfuse-trusted-program");
  ASSERT_FALSE(in_tmp.path().empty());
  MakeProgram(in_tmp.path() + "/ringfused", 0755);
  EXPECT_TRUE(OpenTrustedProgram(in_tmp.path() + "/ringfused").ok());

  const std::string sticky = dir_.path() + "/sticky";
  MakeProgram(sticky + "/theirs/ringfused", 0755);
  MakeProgram(sticky + "/ours/ringfused", 0755);
  ASSERT_EQ(::chmod(sticky.c_str(), 01777), 0);
  EXPECT_TRUE(OpenTrustedProgram(sticky + "/ours/ringfused").ok()) << "the control";
  ASSERT_EQ(::chown((sticky + "/theirs").c_str(), kStranger, kStranger), 0);
  EXPECT_THAT(RefusalOf(sticky + "/theirs/ringfused"),
              HasSubstr(": " + sticky + "/theirs belongs to uid 4242; "));
  ASSERT_EQ(::symlink("ours", (sticky + "/link").c_str()), 0);
  EXPECT_TRUE(OpenTrustedProgram(sticky + "/link/ringfused").ok()) << "root's own link";
  ASSERT_EQ(::lchown((sticky + "/link").c_str(), kStranger, kStranger), 0);
  EXPECT_THAT(RefusalOf(sticky + "/link/ringfused"),
              HasSubstr(": " + sticky + "/link belongs to uid 4242; "));

  ASSERT_EQ(::chmod(sticky.c_str(), 0777), 0);
  EXPECT_THAT(RefusalOf(sticky + "/ours/ringfused"),
              HasSubstr(": " + sticky + " is writable by everyone; "))
      << "without the sticky bit anyone may rename ours away";
}

TEST_F(TrustedProgram, RefusesAProgramUnderADirectoryOfAnotherUser) {
  const std::string program = dir_.path() + "/theirs/ringfused";
  MakeProgram(program, 0755);
  ASSERT_EQ(::chown((dir_.path() + "/theirs").c_str(), kStranger, kStranger), 0);
  EXPECT_THAT(RefusalOf(program), HasSubstr(": " + dir_.path() + "/theirs belongs to uid 4242; "));
}

TEST_F(TrustedProgram, RefusesAProgramItsGroupMayWrite) {
  const std::string program = dir_.path() + "/bin/ringfused";
  MakeProgram(program, 0775);
  ASSERT_EQ(::chown(program.c_str(), 0, 1000), 0);
  EXPECT_THAT(RefusalOf(program), HasSubstr(": " + program + " is writable by group 1000; "));
}

TEST_F(TrustedProgram, RefusesAProgramOfAnotherUser) {
  const std::string program = dir_.path() + "/bin/ringfused";
  MakeProgram(program, 0755);
  ASSERT_EQ(::chown(program.c_str(), kStranger, 0), 0);
  EXPECT_THAT(RefusalOf(program), HasSubstr(": " + program + " belongs to uid 4242; "));
}

// A link is followed as the kernel would, and the directories on the way to its target are
// checked as well as the one holding it.
TEST_F(TrustedProgram, FollowsLinksAndChecksWhereTheyLead) {
  MakeProgram(dir_.path() + "/bin/ringfused", 0755);
  std::filesystem::create_directory_symlink("bin", dir_.path() + "/current");
  std::filesystem::create_symlink(dir_.path() + "/current/ringfused", dir_.path() + "/latest");
  EXPECT_TRUE(OpenTrustedProgram(dir_.path() + "/latest").ok());
  EXPECT_TRUE(OpenTrustedProgram(dir_.path() + "/current/../bin/./ringfused").ok());

  MakeProgram(dir_.path() + "/open/ringfused", 0755);
  ASSERT_EQ(::chmod((dir_.path() + "/open").c_str(), 0777), 0);
  std::filesystem::create_symlink(dir_.path() + "/open/ringfused", dir_.path() + "/elsewhere");
  EXPECT_THAT(RefusalOf(dir_.path() + "/elsewhere"),
              HasSubstr(": " + dir_.path() + "/open is writable by everyone; "));
  std::filesystem::create_symlink(dir_.path() + "/bin/ringfused", dir_.path() + "/open/link");
  EXPECT_THAT(RefusalOf(dir_.path() + "/open/link"),
              HasSubstr(": " + dir_.path() + "/open is writable by everyone; "));
}

TEST_F(TrustedProgram, SaysWhatIsMissing) {
  const std::string absent = dir_.path() + "/absent";
  EXPECT_EQ(RefusalOf(absent), "starting " + absent + ": No such file or directory");
  std::filesystem::create_symlink("absent", dir_.path() + "/dangling");
  EXPECT_EQ(RefusalOf(dir_.path() + "/dangling"),
            "starting " + dir_.path() + "/dangling: " + absent + ": No such file or directory");
  EXPECT_THAT(RefusalOf(dir_.path()), HasSubstr("Is a directory"));
  EXPECT_THAT(RefusalOf("ringfused"), HasSubstr("must be absolute"));
}

}  // namespace
}  // namespace ringfuse::daemon
