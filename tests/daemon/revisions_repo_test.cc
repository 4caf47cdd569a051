// The revision repository and the control protocol, without a mount: which revision is served
// first, which names are refused, and what a control request gets back.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "daemon/control_commands.h"
#include "daemon/options.h"
#include "daemon/revisions.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringfuse::daemon {
namespace {

using ::testing::HasSubstr;

class RevisionRepoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/ringfuse-repo.XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr);
    path_ = dir_template;
  }
  void TearDown() override { std::filesystem::remove_all(path_); }

  void MakeRevisions(std::initializer_list<const char*> names) {
    for (const char* name : names) std::filesystem::create_directory(path_ + "/" + name);
  }

  std::string path_;
};

TEST_F(RevisionRepoTest, NewestIsTheLastInVersionOrder) {
  MakeRevisions({"r9", "r10", "r2", "2026.10", "2026.9"});
  std::ofstream(path_ + "/r99-notes");  // a file, not a revision
  absl::StatusOr<RevisionRepo> repo = RevisionRepo::Open(path_);
  ASSERT_TRUE(repo.ok()) << repo.status();
  EXPECT_EQ(*repo->Newest(), "r10");
}

TEST_F(RevisionRepoTest, NumbersCompareByValueNotByDigits) {
  MakeRevisions({"2026.9", "2026.10", "2026.010"});
  absl::StatusOr<RevisionRepo> repo = RevisionRepo::Open(path_);
  ASSERT_TRUE(repo.ok()) << repo.status();
  const std::string newest = *repo->Newest();
  EXPECT_TRUE(newest == "2026.10" || newest == "2026.010") << newest;
}

TEST_F(RevisionRepoTest, AnEmptyRepositorySaysWhatItNeeds) {
  absl::StatusOr<RevisionRepo> repo = RevisionRepo::Open(path_);
  ASSERT_TRUE(repo.ok()) << repo.status();
  absl::StatusOr<std::string> newest = repo->Newest();
  ASSERT_FALSE(newest.ok());
  EXPECT_THAT(newest.status().message(), HasSubstr("one directory per revision"));
}

TEST_F(RevisionRepoTest, OnlyDirectoriesDirectlyInTheRepositoryAreRevisions) {
  MakeRevisions({"r1"});
  std::filesystem::create_directory(path_ + "/r1/inner");
  std::ofstream(path_ + "/file");
  std::filesystem::create_directory_symlink("/etc", path_ + "/escape");
  absl::StatusOr<RevisionRepo> repo = RevisionRepo::Open(path_);
  ASSERT_TRUE(repo.ok()) << repo.status();
  EXPECT_TRUE(repo->OpenRevision("r1").ok());
  for (const char* name : {"..", ".", "", "r1/inner", "file", "escape", "missing"}) {
    absl::StatusOr<UniqueFd> opened = repo->OpenRevision(name);
    EXPECT_FALSE(opened.ok()) << "\"" << name << "\" was accepted as a revision";
  }
  EXPECT_THAT(repo->OpenRevision("missing").status().message(),
              HasSubstr("no revision \"missing\" in " + path_));
}

TEST_F(RevisionRepoTest, AMissingRepositoryIsNamed) {
  absl::StatusOr<RevisionRepo> repo = RevisionRepo::Open(path_ + "/absent");
  ASSERT_FALSE(repo.ok());
  EXPECT_THAT(repo.status().message(), HasSubstr(path_ + "/absent"));
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
  EXPECT_FALSE(ParseControlReply("").ok());
}

TEST(RevisionsOptions, LongTimeoutsAndKeptPagesUnlessToldOtherwise) {
  std::vector<std::string_view> args = {"--revisions", "/repo", "/mnt"};
  absl::StatusOr<DaemonOptions> parsed = ParseDaemonArgs(args);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->entry_timeout.seconds, kRevisionsTimeout.seconds);
  EXPECT_EQ(parsed->negative_timeout.seconds, kRevisionsTimeout.seconds);
  EXPECT_TRUE(parsed->keep_cache);
  EXPECT_TRUE(parsed->read_only);

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
