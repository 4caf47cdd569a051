// The main of every test binary. Outside CI it is GoogleTest's own. In CI (environment CI=true)
// a skipped test fails, naming itself and its reason, unless tests/skip_allowlist.txt allows it:
// there a skip would only hide that CI did not test what it claims (no root, no FUSE, no
// FUSE-over-io_uring, or a bug of ours that looks like a refusal).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "tests/skip_allowlist.h"

namespace ringfuse::testing {
namespace {

bool InCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::strcmp(ci, "true") == 0;
}

// Turns each skip the allowlist does not name into a failure at the GTEST_SKIP that made it.
// Failures may be added in OnTestEnd, which GoogleTest calls on this listener before its printer
// (end events go to the listeners in reverse order), so the test is reported as failed.
class SkipsFailInCi : public ::testing::EmptyTestEventListener {
 public:
  explicit SkipsFailInCi(SkipAllowlist allowlist) : allowlist_(std::move(allowlist)) {}

  void OnTestEnd(const ::testing::TestInfo& test) override {
    if (!test.result()->Skipped()) return;
    const std::string name = std::string(test.test_suite_name()) + "." + test.name();
    if (const AllowedSkip* allowed = allowlist_.Find(name)) {
      std::printf("[ ALLOWED  ] %s may skip in CI: %s\n", name.c_str(), allowed->reason.c_str());
      return;
    }
    const ::testing::TestPartResult& skip = SkipOf(*test.result());
    ADD_FAILURE_AT(skip.file_name() ? skip.file_name() : "?", skip.line_number())
        << name << " skipped in CI (CI=true), and " << RINGFUSE_SKIP_ALLOWLIST
        << " does not allow it. It skipped because: " << skip.message();
  }

 private:
  static const ::testing::TestPartResult& SkipOf(const ::testing::TestResult& result) {
    for (int i = 0; i < result.total_part_count(); ++i) {
      if (result.GetTestPartResult(i).skipped()) return result.GetTestPartResult(i);
    }
    return result.GetTestPartResult(0);  // Skipped() says there is one
  }

  SkipAllowlist allowlist_;
};

}  // namespace
}  // namespace ringfuse::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (ringfuse::testing::InCi()) {
    absl::StatusOr<ringfuse::testing::SkipAllowlist> allowlist =
        ringfuse::testing::SkipAllowlist::Read(RINGFUSE_SKIP_ALLOWLIST);
    if (!allowlist.ok()) {
      std::fprintf(stderr, "CI=true: %s\n", std::string(allowlist.status().message()).c_str());
      return 1;
    }
    ::testing::UnitTest::GetInstance()->listeners().Append(
        new ringfuse::testing::SkipsFailInCi(std::move(*allowlist)));
  }
  return RUN_ALL_TESTS();
}
