// ringfuse-trace's reading of traces: the summary's counts and percentiles, the follow lines,
// and damaged lines skipped by number while the rest still count.
#include "tools/trace_summary.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/percentile.h"
#include "tools/trace_format.h"

namespace ringfuse::tools {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Reply(int unique, const char* op, int error, int latency_us) {
  return "{\"t\":1,\"ev\":\"reply\",\"unique\":" + std::to_string(unique) + ",\"op\":\"" + op +
         "\",\"error\":" + std::to_string(error) +
         ",\"size\":0,\"latency_ns\":" + std::to_string(latency_us * 1000) + "}";
}

TEST(TraceSummary, CountsRequestsRepliesAndErrorsPerOpcodeWithPercentiles) {
  TraceSummary summary;
  uint64_t number = 0;
  for (int i = 1; i <= 100; ++i) {
    summary.Add(++number, "{\"t\":0,\"ev\":\"request\",\"unique\":" + std::to_string(2 * i) +
                              ",\"op\":\"LOOKUP\",\"nodeid\":1}");
    summary.Add(++number, Reply(2 * i, "LOOKUP", i % 10 == 0 ? -2 : 0, i));
  }
  summary.Add(++number, R"({"t":5,"ev":"malformed","error":"short header","message":"m"})");
  summary.Add(++number, R"({"t":6,"ev":"dropped","count":7})");
  const OpcodeTally& lookup = summary.by_opcode().at("LOOKUP");
  EXPECT_EQ(lookup.requests, 100u);
  EXPECT_EQ(lookup.replies, 100u);
  EXPECT_EQ(lookup.errors, 10u);
  EXPECT_EQ(summary.malformed(), 1u);
  EXPECT_EQ(summary.dropped(), 7u);
  const std::string report = summary.Report();
  EXPECT_THAT(report, HasSubstr("LOOKUP                 100       100       10       50.0       "
                                "90.0       99.0      100.0"));
  EXPECT_THAT(report, HasSubstr("malformed 1, dropped 7, lines skipped 0"));
}

TEST(TraceSummary, ADamagedLineIsReportedByNumberAndTheRestStillCount) {
  TraceSummary summary;
  summary.Add(1, Reply(2, "GETATTR", 0, 5));
  summary.Add(2, R"({"t":1,"ev":"reply","unique":4,"op":"GETA)");  // cut off mid-write
  summary.Add(3, "[1,2]");
  summary.Add(4, R"({"t":1,"unique":6})");
  summary.Add(5, R"({"t":1,"ev":"reply","op":"GETATTR","error":"bad","latency_ns":"x"})");
  summary.Add(6, Reply(8, "GETATTR", -13, 7));
  EXPECT_THAT(summary.problems(), ElementsAre("line 2: not a JSON object",
                                              "line 3: not a JSON object", "line 4: no \"ev\""));
  const OpcodeTally& getattr = summary.by_opcode().at("GETATTR");
  EXPECT_EQ(getattr.replies, 3u);  // line 5's wrong types count the reply, not its error
  EXPECT_EQ(getattr.errors, 1u);
  EXPECT_THAT(getattr.latencies_us, ElementsAre(5.0, 7.0));
  EXPECT_THAT(summary.Report(), HasSubstr("lines skipped 3"));
}

TEST(TraceSummary, RepliesWithoutTheirRequestAreCountedApart) {
  TraceSummary summary;
  summary.Add(1, R"({"t":1,"ev":"reply","unique":4,"error":0,"size":0})");
  EXPECT_EQ(summary.by_opcode().at("(unpaired)").replies, 1u);
  EXPECT_THAT(summary.Report(),
              HasSubstr("(unpaired)               0         1        0          -"));
}

TEST(TraceFormat, AnEventIsOneLineInTheWritersOrder) {
  absl::StatusOr<std::string> shown = FormatTraceLine(
      R"({"t":12345678901,"ev":"request","unique":12,"op":"LOOKUP","nodeid":1,"pid":42,)"
      R"("name":"a\nb\u00ff"})");
  ASSERT_TRUE(shown.ok()) << shown.status();
  EXPECT_EQ(*shown, "12.345679 request   #12 LOOKUP nodeid=1 pid=42 name=\"a\\nb\xc3\xbf\"");
  shown = FormatTraceLine(Reply(12, "LOOKUP", -2, 24));
  ASSERT_TRUE(shown.ok()) << shown.status();
  EXPECT_EQ(*shown, "0.000000 reply     #12 LOOKUP error=-2 size=0 latency=24.0us");
  EXPECT_FALSE(FormatTraceLine("{\"t\":1}").ok());
  EXPECT_FALSE(FormatTraceLine("not json").ok());
}

TEST(Percentile, NearestRank) {
  std::vector<double> three{3, 1, 2};
  EXPECT_EQ(Percentile(three, 0.99), 3);
  EXPECT_EQ(Percentile(three, 0.5), 2);
  std::vector<double> four{4, 3, 2, 1};
  EXPECT_EQ(Percentile(four, 0.5), 2);
  std::vector<double> none;
  EXPECT_EQ(Percentile(none, 0.5), 0);
}

}  // namespace
}  // namespace ringfuse::tools
