// The control socket's request lines, parsed without a daemon: what each asks for, and that a
// refusal says why in one printable line (it goes back to the client as "error MESSAGE").
#include "daemon/control/control_commands.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ringfuse::daemon {
namespace {

using ::testing::HasSubstr;

std::string RefusalOf(std::string_view request) {
  const absl::StatusOr<ControlRequest> parsed = ParseControlRequest(request);
  EXPECT_FALSE(parsed.ok()) << request;
  return parsed.ok() ? "" : std::string(parsed.status().message());
}

TEST(ControlRequest, PublishNamesARevisionAndAnInvalidationMethod) {
  const absl::StatusOr<ControlRequest> parsed = ParseControlRequest("publish r2 entries-batched");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const auto* publish = std::get_if<PublishRequest>(&*parsed);
  ASSERT_NE(publish, nullptr);
  EXPECT_EQ(publish->revision, "r2");
  EXPECT_EQ(publish->method, InvalidationMethod::kEntriesBatched);
}

TEST(ControlRequest, RepeatedSpacesSeparateWordsLikeOne) {
  const absl::StatusOr<ControlRequest> parsed = ParseControlRequest("  publish  r3   epoch ");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(std::get<PublishRequest>(*parsed).revision, "r3");
  EXPECT_TRUE(std::holds_alternative<StatusRequest>(*ParseControlRequest("status")));
}

TEST(ControlRequest, RefusesWhatItDoesNotKnow) {
  EXPECT_THAT(RefusalOf(""), HasSubstr("unknown request"));
  EXPECT_THAT(RefusalOf("status now"), HasSubstr("unknown request"));
  EXPECT_THAT(RefusalOf("publish r2"), HasSubstr("unknown request"));
  EXPECT_THAT(RefusalOf("Publish r2 epoch"), HasSubstr("unknown request"));
  EXPECT_THAT(RefusalOf("publish r2 sometimes"), HasSubstr("unknown invalidation \"sometimes\""));
}

TEST(ControlRequest, RevisionsAreSingleWords) {
  EXPECT_THAT(RefusalOf("publish r\t2 epoch"), HasSubstr("single words"));
  EXPECT_THAT(RefusalOf(std::string("publish r\0002 epoch", 17)), HasSubstr("single words"));
  EXPECT_THAT(RefusalOf("publish r\x7f epoch"), HasSubstr("single words"));
}

TEST(ControlRequest, RestartTakesAnOptionalAbsoluteProgramPath) {
  const absl::StatusOr<ControlRequest> own = ParseControlRequest("restart");
  ASSERT_TRUE(own.ok()) << own.status();
  ASSERT_TRUE(std::holds_alternative<RestartRequest>(*own));
  EXPECT_EQ(std::get<RestartRequest>(*own).binary, "") << "the daemon's own program";
  EXPECT_EQ(std::get<RestartRequest>(*ParseControlRequest("restart  ")).binary, "");
  const absl::StatusOr<ControlRequest> other = ParseControlRequest("restart /usr/sbin/ringfused");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(std::get<RestartRequest>(*other).binary, "/usr/sbin/ringfused");
}

// The path is the rest of the line: a name may hold spaces, leading or not.
TEST(ControlRequest, RestartsPathIsTheRestOfTheLine) {
  const absl::StatusOr<ControlRequest> parsed =
      ParseControlRequest("  restart   /opt/ring fused/bin/ringfused ");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(std::get<RestartRequest>(*parsed).binary, "/opt/ring fused/bin/ringfused ");
}

TEST(ControlRequest, RestartRefusesRelativePathsAndControlCharacters) {
  EXPECT_EQ(RefusalOf("restart ringfused"),
            "restart: the program's path must be absolute, not \"ringfused\"");
  EXPECT_THAT(RefusalOf("restart ./ringfused"), HasSubstr("must be absolute"));
  EXPECT_THAT(RefusalOf("restart /usr/sbin/ring\tfused"), HasSubstr("control character"));
  EXPECT_THAT(RefusalOf("restart /usr/sbin/ring\x7f"), HasSubstr("\"/usr/sbin/ring\\x7f\""));
  EXPECT_THAT(RefusalOf(std::string("restart /a\0b", 12)), HasSubstr("control character"));
  EXPECT_THAT(RefusalOf("restarts"), HasSubstr("unknown request"));
}

// What a client sent is quoted escaped, so that a refusal stays one printable line.
TEST(ControlRequest, RefusalsQuoteTheRequestEscaped) {
  EXPECT_EQ(RefusalOf("stat\rus\n"),
            "unknown request \"stat\\rus\\n\": publish REV METHOD, status, or restart [BINARY]");
  EXPECT_THAT(RefusalOf("publish r2 ep\x01och"), HasSubstr("\"ep\\x01och\""));
}

}  // namespace
}  // namespace ringfuse::daemon
