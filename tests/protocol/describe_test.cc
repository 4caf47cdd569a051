#include "protocol/describe.h"

#include <cerrno>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ringfuse/observer.h"
#include "ringfuse/protocol/parse.h"
#include "tests/protocol/wire.h"

namespace ringfuse {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

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

// The fields as a tracer receives them: name and value, wire bytes kept as they came.
class RecordingFields : public internal::FieldVisitor {
 public:
  void Number(std::string_view name, uint64_t value, internal::FieldBase /*base*/) override {
    fields.emplace_back(name, std::to_string(value));
  }
  void Bytes(std::string_view name, std::string_view value) override {
    fields.emplace_back(name, value);
  }
  void Text(std::string_view name, std::string_view value) override {
    fields.emplace_back(name, value);
  }
  std::vector<std::pair<std::string, std::string>> fields;
};

TEST(Describe, TheFieldVisitorSeesTheSameFieldsAsTheLine) {
  const std::vector<std::byte> message =
      testing::RequestMessage({.opcode = 45, .unique = 7, .nodeid = 5},
                              testing::Wire().U64(9).U32(1).U32(0).CString("o\xff").CString("n"));
  const Request request = Parsed(message);
  RecordingFields recorded;
  internal::VisitRequestFields(request.args, recorded);
  EXPECT_THAT(recorded.fields, ElementsAre(Pair("old", "o\xff"), Pair("newdir", "9"),
                                           Pair("new", "n"), Pair("flags", "1")));
  EXPECT_THAT(DescribeRequest(request), HasSubstr("old=\"o\\377\" newdir=9 new=\"n\" flags=0x1"));
}

// A trace puts the header and the fields in one flat record, so no opcode may name a field like
// one of the header's, nor one field twice.
template <size_t... I>
void CheckEveryOpcodesFieldNames(std::index_sequence<I...> /*indices*/) {
  const std::set<std::string> header{"t", "ev", "unique", "op", "nodeid", "pid", "uid", "gid"};
  (
      [&] {
        RecordingFields recorded;
        internal::VisitRequestFields(RequestArgs(std::in_place_index<I>), recorded);
        std::set<std::string> seen;
        for (const auto& [name, value] : recorded.fields) {
          EXPECT_FALSE(header.contains(name)) << "alternative " << I << " has " << name;
          EXPECT_TRUE(seen.insert(name).second) << "alternative " << I << " repeats " << name;
        }
      }(),
      ...);
}

TEST(Describe, NoFieldNameRepeatsTheHeadersOrItself) {
  CheckEveryOpcodesFieldNames(std::make_index_sequence<std::variant_size_v<RequestArgs>>());
}

TEST(Describe, RepliesShowSizeOrTheErrorsName) {
  EXPECT_EQ(DescribeReply(12, 0, 128), "reply unique=12 ok (128 bytes)");
  EXPECT_EQ(DescribeReply(13, -ENOENT, 0), "reply unique=13 error=-ENOENT");
}

}  // namespace
}  // namespace ringfuse
