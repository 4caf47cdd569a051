// ringfuse-conform's reports and their diff, without a kernel: the JSON reads back as written,
// the markdown shows the offer flag by flag and every result, and the diff names each change (a
// check that flipped, a flag newly offered, an opcode sequence that changed) and nothing else.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ringfuse/ringfuse.h"
#include "tools/conform/check.h"
#include "tools/conform/diff.h"
#include "tools/conform/report.h"
#include "tools/conform/runner.h"

namespace ringfuse::conform {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

Report Sample() {
  Report report;
  report.ringfuse_minor = 45;
  report.kernel = {.release = "6.18.0",
                   .major = 7,
                   .minor = 45,
                   .init_flags = wire::init_flag::kAsyncRead | wire::init_flag::kHasResend,
                   .enable_uring = "Y"};
  Result stat{.check = "coverage.stat", .transport = "threads"};
  stat.coverage["stat, cached, first"] = {"LOOKUP"};
  report.results.push_back(stat);
  report.results.push_back({.check = "notify.resend",
                            .transport = "uring-cmd",
                            .outcome = Outcome::kNotOffered,
                            .reason = "not on rings"});
  report.results.push_back({.check = "notify.inc_epoch",
                            .transport = "threads",
                            .outcome = Outcome::kFail,
                            .reason = "expected: once",
                            .evidence = {"n3 looked up 2 times"}});
  report.opcodes_seen = {"LOOKUP", "INIT"};
  return report;
}

TEST(ConformReport, JsonReadsBackAsWritten) {
  const Report report = Sample();
  const absl::StatusOr<Report> back = ReportFromJson(ReportToJson(report));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(DiffReports(report, *back), IsEmpty());
  EXPECT_EQ(back->results[2].evidence, report.results[2].evidence);
  EXPECT_EQ(ReportToJson(report)["kernel"]["init_offer"],
            nlohmann::json({"ASYNC_READ", "HAS_RESEND"}));
}

TEST(ConformReport, JsonThatIsNoReportIsRefusedSayingWhy) {
  const absl::StatusOr<Report> refused = ReportFromJson(nlohmann::json{{"tool", "x"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("not a ringfuse-conform report"));
  nlohmann::json wrong = ReportToJson(Sample());
  wrong["results"][0]["outcome"] = "maybe";
  EXPECT_THAT(ReportFromJson(wrong).status().message(), HasSubstr("unknown outcome \"maybe\""));
}

TEST(ConformReport, MarkdownShowsTheOfferResultsFailuresAndCoverage) {
  const std::string markdown = ReportToMarkdown(Sample());
  EXPECT_THAT(markdown, HasSubstr("# What Linux 6.18.0's FUSE does"));
  EXPECT_THAT(markdown, HasSubstr("| 0 | ASYNC_READ | yes |"));
  EXPECT_THAT(markdown, HasSubstr("| 1 | POSIX_LOCKS | no |"));
  EXPECT_THAT(markdown, HasSubstr("| notify.resend | - | - | not offered |"));
  EXPECT_THAT(markdown, HasSubstr("**notify.inc_epoch** on threads, fail: expected: once"));
  EXPECT_THAT(markdown, HasSubstr("`n3 looked up 2 times`"));
  EXPECT_THAT(markdown, HasSubstr("| stat, cached, first | threads | LOOKUP |"));
  EXPECT_THAT(markdown, HasSubstr("never sent during the run: FORGET, GETATTR"));
  EXPECT_THAT(markdown, Not(HasSubstr("newer than ringfuse's")));
}

TEST(ConformReport, AKernelNewerThanRingfuseIsSaidSo) {
  Report report = Sample();
  report.kernel.minor = 46;
  report.kernel.init_flags |= uint64_t{1} << 50;
  const std::string markdown = ReportToMarkdown(report);
  EXPECT_THAT(markdown, HasSubstr("what 7.46..7.46 added is not typed here"));
  EXPECT_THAT(markdown, HasSubstr("| 50 | BIT50 | yes |"));
}

TEST(ConformDiff, NamesEachChangeAndNothingElse) {
  const Report before = Sample();
  Report after = Sample();
  after.kernel.release = "6.19.0";
  after.kernel.init_flags |= wire::init_flag::kPassthrough;
  after.kernel.init_flags &= ~wire::init_flag::kHasResend;
  after.results[2].outcome = Outcome::kPass;
  after.results[2].reason.clear();
  after.results[0].coverage["stat, cached, first"] = {"LOOKUP", "GETATTR"};
  after.results.pop_back();
  after.results.push_back({.check = "notify.prune", .transport = "threads"});
  after.opcodes_seen.push_back("GETATTR");
  EXPECT_THAT(
      DiffReports(before, after),
      ElementsAre("kernel: 6.18.0 -> 6.19.0", "INIT offer: PASSTHROUGH newly offered",
                  "INIT offer: HAS_RESEND no longer offered",
                  "coverage stat, cached, first on threads: LOOKUP -> LOOKUP GETATTR",
                  "notify.prune on threads: only in B (pass)",
                  "notify.inc_epoch on threads: only in A (fail)", "opcode GETATTR: newly sent"));
  EXPECT_THAT(DiffReports(before, before), IsEmpty());
}

TEST(ConformDiff, ACoverageActionOnlyOneReportHasIsSaid) {
  const Report before = Sample();
  Report after = Sample();
  after.results[0].coverage["stat, new action"] = {"LOOKUP"};
  EXPECT_THAT(DiffReports(before, after),
              ElementsAre("coverage stat, new action on threads: only in B (LOOKUP)"));
  EXPECT_THAT(DiffReports(after, before),
              ElementsAre("coverage stat, new action on threads: only in A (LOOKUP)"));
}

TEST(ConformDiff, AFlippedCheckSaysWhy) {
  const Report before = Sample();
  Report after = Sample();
  after.results[1].outcome = Outcome::kPass;
  after.results[1].reason.clear();
  after.results[0].outcome = Outcome::kFail;
  after.results[0].reason = "expected: LOOKUP";
  EXPECT_THAT(DiffReports(before, after),
              ElementsAre("coverage.stat on threads: pass -> fail: expected: LOOKUP",
                          "notify.resend on uring-cmd: not offered -> pass"));
}

TEST(ConformCatalogue, NamesAreUniqueAndEachSaysWhatItShows) {
  std::set<std::string_view> names;
  for (const Check& check : Catalogue()) {
    EXPECT_TRUE(names.insert(check.name).second) << check.name;
    EXPECT_FALSE(check.summary.empty()) << check.name;
    EXPECT_NE(check.run, nullptr) << check.name;
    EXPECT_NE(check.name.find('.'), std::string_view::npos) << check.name << ": group.what";
  }
  EXPECT_GE(names.size(), 50u);
}

TEST(ConformCatalogue, OnlySelectsByGlobAndRefusesAPatternThatMatchesNothing) {
  const absl::StatusOr<std::vector<const Check*>> notify = SelectChecks({"notify.*"});
  ASSERT_TRUE(notify.ok());
  EXPECT_GE(notify->size(), 10u);
  for (const Check* check : *notify) EXPECT_TRUE(check->name.starts_with("notify."));
  EXPECT_EQ(SelectChecks({})->size(), Catalogue().size());
  const absl::StatusOr<std::vector<const Check*>> none = SelectChecks({"notify.*", "nosuch"});
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("no check matches \"nosuch\""));
}

}  // namespace
}  // namespace ringfuse::conform
