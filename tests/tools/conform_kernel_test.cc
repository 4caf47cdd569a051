// ringfuse-conform against this kernel. The negative controls: the checks whose bodies take the
// server's invalidation fail with a server that sends none, and an expectation of the wrong
// opcode order fails, so a pass means the kernel did it. Then the whole catalogue, through the
// real binary on every transport: nothing fails, and whatever is "not offered" is on the skip
// allowlist (as ringfuse-conform/<check>/<transport>) with its reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "tests/skip_allowlist.h"
#include "tests/transport/kernel_fixture.h"
#include "tools/conform/context.h"
#include "tools/conform/fixture.h"
#include "tools/conform/invalidation.h"
#include "tools/conform/report.h"
#include "tools/conform/runner.h"

namespace ringfuse::conform {
namespace {

using ::testing::HasSubstr;

class ConformKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    RINGFUSE_SKIP_UNLESS_KERNEL();
    absl::StatusOr<KernelOffer> offer = ProbeKernel();
    ASSERT_TRUE(offer.ok()) << offer.status();
    offer_ = *offer;
  }
  KernelOffer offer_;
};

absl::Status NoInvalidation(Notifier&) { return absl::OkStatus(); }

TEST_F(ConformKernel, IncEpochCheckPassesAndFailsWithAServerThatSendsNothing) {
  if (offer_.minor < 44)
    GTEST_SKIP() << "the kernel speaks 7." << offer_.minor << ", INC_EPOCH is 7.44";
  CheckContext real("notify.inc_epoch", TransportKind::kThreads, offer_);
  ExpectEachCachedNameLookedUpOnceAfter(real, [](Notifier& n) { return n.IncEpoch(); });
  const Result passed = real.Finish(0);
  EXPECT_EQ(passed.outcome, Outcome::kPass) << passed.reason;

  CheckContext silent("notify.inc_epoch", TransportKind::kThreads, offer_);
  ExpectEachCachedNameLookedUpOnceAfter(silent, NoInvalidation);
  const Result failed = silent.Finish(0);
  EXPECT_EQ(failed.outcome, Outcome::kFail);
  EXPECT_THAT(failed.reason, HasSubstr("after the invalidation, stat twice: every name looked "
                                       "up 2 times"));
}

TEST_F(ConformKernel, RevisionSwitchCheckFailsWithoutTheEpoch) {
  if (offer_.minor < 44)
    GTEST_SKIP() << "the kernel speaks 7." << offer_.minor << ", INC_EPOCH is 7.44";
  CheckContext silent("revision.inc_epoch_readlink_storm", TransportKind::kThreads, offer_);
  ExpectNoStaleOrTruncatedLinkAcrossSwitch(silent, NoInvalidation);
  const Result failed = silent.Finish(0);
  EXPECT_EQ(failed.outcome, Outcome::kFail);
  EXPECT_THAT(failed.reason, HasSubstr("no readlink begun after the switch returns an old target"));
}

TEST_F(ConformKernel, AnExpectationOfTheWrongOpcodeOrderFails) {
  for (const bool right : {true, false}) {
    CheckContext context("coverage.readlink", TransportKind::kThreads, offer_);
    MemFs fs(Cached());
    Populate(fs);
    {
      const std::unique_ptr<Mounted> mount = context.Mount(fs);
      ASSERT_NE(mount, nullptr);
      const size_t mark = mount->log().Mark();
      char target[16];
      ASSERT_GT(::readlink(mount->Path("link").c_str(), target, sizeof(target)), 0);
      const std::vector<std::string> expected =
          right ? std::vector<std::string>{"LOOKUP", "READLINK"}
                : std::vector<std::string>{"READLINK", "LOOKUP"};
      context.ExpectInOrder("readlink", mount->log().OpcodesSince(mark), expected);
    }
    const Result result = context.Finish(0);
    EXPECT_EQ(result.outcome, right ? Outcome::kPass : Outcome::kFail) << result.reason;
  }
}

// The catalogue's run takes minutes under the sanitizers; ctest's timeout is the bound.
TEST_F(ConformKernel, TheWholeCatalogueOnEveryTransportFailsNothing) {
  const std::string json = ::testing::TempDir() + "/conform.json";
  const std::string markdown = ::testing::TempDir() + "/conform.md";
  const std::string command =
      absl::StrCat(RINGFUSE_CONFORM_BINARY, " --transport=all --enable-uring --json=", json,
                   " --markdown=", markdown);
  const int status = std::system(command.c_str());
  std::ifstream file(json);
  const nlohmann::json parsed = nlohmann::json::parse(file, nullptr, false);
  const absl::StatusOr<Report> report = ReportFromJson(parsed);
  ASSERT_TRUE(report.ok()) << report.status();
  const absl::StatusOr<testing::SkipAllowlist> allowed =
      testing::SkipAllowlist::Read(RINGFUSE_SKIP_ALLOWLIST);
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  for (const Result& result : report->results) {
    const std::string name = absl::StrCat("ringfuse-conform/", result.check, "/", result.transport);
    EXPECT_NE(result.outcome, Outcome::kFail) << name << ": " << result.reason;
    if (result.outcome == Outcome::kNotOffered) {
      EXPECT_NE(allowed->Find(name), nullptr) << name << " is not offered: " << result.reason;
    }
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(report->results.size(), 3 * Catalogue().size());
}

}  // namespace
}  // namespace ringfuse::conform
