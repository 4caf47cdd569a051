#include "protocol/describe.h"

#include <cerrno>
#include <variant>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/protocol/wire.h"

namespace ringfuse {
namespace {

using ::testing::HasSubstr;

Request Parsed(const std::vector<std::byte>& message) {
  ParseResult result = ParseRequest(message, ParseContext{});
  EXPECT_TRUE(std::holds_alternative<Request>(result));
  return std::get<Request>(std::move(result));
}

TEST(Describe, ARequestLineNamesTheOpcodeTheCallerAndTheArguments) {
  const std::string line = DescribeRequest(Parsed(testing::RequestMessage(
      {.opcode = 1, .unique = 12, .nodeid = 1, .uid = 1000, .gid = 100, .pid = 42},
      testing::Wire().CString("etc\n"))));
  EXPECT_EQ(line, "LOOKUP unique=12 nodeid=1 uid=1000 gid=100 pid=42 name=\"etc\\n\"");
}

TEST(Describe, RenameShowsBothNamesAndTheFlags) {
  const std::string line = DescribeRequest(Parsed(
      testing::RequestMessage({.opcode = 45, .unique = 7, .nodeid = 5},
                              testing::Wire().U64(9).U32(1).U32(0).CString("old").CString("new"))));
  EXPECT_THAT(line, HasSubstr("RENAME2 unique=7"));
  EXPECT_THAT(line, HasSubstr("old=\"old\" newdir=9 new=\"new\" flags=0x1"));
}

TEST(Describe, RepliesShowSizeOrTheErrorsName) {
  EXPECT_EQ(DescribeReply(12, 0, 128), "reply unique=12 ok (128 bytes)");
  EXPECT_EQ(DescribeReply(13, -ENOENT, 0), "reply unique=13 error=-ENOENT");
}

}  // namespace
}  // namespace ringfuse
