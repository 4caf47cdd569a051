// The revision repository and the control protocol, without a mount: which revision is served
// first, which names are refused, and what a control request gets back.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "daemon/control/control_commands.h"
#include "daemon/options.h"
#include "daemon/revisions/revisions.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::TempDir;
using ringfuse::testing::WriteFile;
using ::testing::HasSubstr;

class RevisionRepoTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.path().empty()) << std::strerror(errno); }

  void MakeRevisions(std::initializer_list<const char*> names) {
    for (const char* name : names) std::filesystem::create_directory(dir_.path() + "/" + name);
  }

  TempDir dir_{"ringfuse-repo"};
};

TEST_F(RevisionRepoTest, NewestIsTheLastInVersionOrder) {
  MakeRevisions({"r9", "r10", "r2", "2026.10", "2026.9"});
  WriteFile(dir_.path() + "/r99-notes", "");  // a file, not a revision
  absl::StatusOr<RevisionRepo> repo = RevisionRepo::Open(dir_.path());
  ASSERT_TRUE(repo.ok()) << repo.status();
  EXPECT_EQ(*repo->Newest(), "r10");
}

TEST_F(RevisionRepoTest, NumbersCompareByValueNotByDigits) {
  MakeRevisions({"2026.9", "2026.10", "2026.010"});
  absl::StatusOr<RevisionRepo> repo = RevisionRepo::Open(dir_.path());
  ASSERT_TRUE(repo.ok()) << repo.status();
  const std::string newest = *repo->Newest();
  EXPECT_TRUE(newest == "2026.10" || newest == "2026.010") << newest;
}

TEST_F(RevisionRepoTest, AnEmptyRepositorySaysWhatItNeeds) {
  absl::StatusOr<RevisionRepo> repo = RevisionRepo::Open(dir_.path());
  ASSERT_TRUE(repo.ok()) << repo.status();
  absl::StatusOr<std::string> newest = repo->Newest();
  ASSERT_FALSE(newest.ok());
  EXPECT_THAT(newest.status().message(), HasSubstr("one directory per revision"));
}

TEST_F(RevisionRepoTest, OnlyDirectoriesDirectlyInTheRepositoryAreRevisions) {
  MakeRevisions({"r1"});
  std::filesystem::create_directory(dir_.path() + "/r1/inner");
  WriteFile(dir_.path() + "/file", "");
  std::filesystem::create_directory_symlink("/etc", dir_.path() + "/escape");
  absl::StatusOr<RevisionRepo> repo = RevisionRepo::Open(dir_.path());
  ASSERT_TRUE(repo.ok()) << repo.status();
  EXPECT_TRUE(repo->OpenRevision("r1").ok());
  for (const char* name : {"..", ".", "", "r1/inner", "file", "escape", "missing"}) {
    absl::StatusOr<base::UniqueFd> opened = repo->OpenRevision(name);
    EXPECT_FALSE(opened.ok()) << "\"" << name << "\" was accepted as a revision";
  }
  EXPECT_THAT(repo->OpenRevision("missing").status().message(),
              HasSubstr("no revision \"missing\" in " + dir_.path()));
}

TEST_F(RevisionRepoTest, AMissingRepositoryIsNamed) {
  absl::StatusOr<RevisionRepo> repo = RevisionRepo::Open(dir_.path() + "/absent");
  ASSERT_FALSE(repo.ok());
  EXPECT_THAT(repo.status().message(), HasSubstr(dir_.path() + "/absent"));
}

TEST(InvalidationMethod, NamesRoundTrip) {
  for (const InvalidationMethod method :
       {InvalidationMethod::kNone, InvalidationMethod::kEntries,
        InvalidationMethod::kEntriesBatched, InvalidationMethod::kEpoch}) {
    EXPECT_EQ(ParseInvalidationMethod(InvalidationMethodName(method)), method);
  }
  EXPECT_EQ(ParseInvalidationMethod("Epoch"), std::nullopt);
  EXPECT_EQ(ParseInvalidationMethod(""), std::nullopt);
}

TEST(ControlReply, OkFieldsAndErrors) {
  absl::StatusOr<ControlFields> fields = ParseControlReply("ok revision=r2 entries=10 odd=a=b");
  ASSERT_TRUE(fields.ok()) << fields.status();
  EXPECT_EQ(fields->at("revision"), "r2");
  EXPECT_EQ(fields->at("entries"), "10");
  EXPECT_EQ(fields->at("odd"), "a=b");

  absl::StatusOr<ControlFields> error = ParseControlReply("error no revision \"x\"");
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.status().message(), "no revision \"x\"");
  EXPECT_FALSE(ParseControlReply("garbage").ok());
  // Found by the fuzzer: fields without a name were taken as the empty name.
  EXPECT_TRUE(absl::IsDataLoss(ParseControlReply("ok revision=r2 =0").status()));
  EXPECT_TRUE(absl::IsDataLoss(ParseControlReply("ok revision=r2 noequals").status()));
  EXPECT_FALSE(ParseControlReply("").ok());
}

TEST(RevisionsOptions, LongTimeoutsAndKeptPagesUnlessToldOtherwise) {
  std::vector<std::string_view> args = {"--revisions", "/repo", "/mnt"};
  absl::StatusOr<DaemonOptions> parsed = ParseDaemonArgs(args);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->entry_timeout.seconds, kRevisionsTimeout.seconds);
  EXPECT_EQ(parsed->negative_timeout.seconds, kRevisionsTimeout.seconds);
  EXPECT_TRUE(parsed->keep_cache);
  EXPECT_TRUE(parsed->mount.read_only);

  args = {"-o", "entry_timeout=2", "--revisions", "/repo", "/mnt", "--revision=r7"};
  parsed = ParseDaemonArgs(args);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->entry_timeout.seconds, 2u);
  EXPECT_EQ(parsed->attr_timeout.seconds, kRevisionsTimeout.seconds);
  EXPECT_EQ(parsed->revision, "r7");

  args = {"/src", "/mnt", "--revision=r7"};
  EXPECT_FALSE(ParseDaemonArgs(args).ok());
}

}  // namespace
}  // namespace ringfuse::daemon
