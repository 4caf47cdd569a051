// JsonTraceWriter without a kernel: parsed requests and replies in, JSON lines out, read back
// with a real JSON parser.
#include "ringfuse/json_trace.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "base/fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "ringfuse/protocol/parse.h"
#include "tests/protocol/wire.h"
#include "transport/json_line.h"

namespace ringfuse {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint32_t kLookup = 1;
constexpr uint32_t kMkdir = 9;

std::vector<std::byte> LookupMessage(uint64_t unique, std::string_view name) {
  return testing::RequestMessage(
      {.opcode = kLookup, .unique = unique, .nodeid = 1, .uid = 1000, .gid = 100, .pid = 42},
      testing::Wire().CString(name));
}

// A message and what it parses to (views into the message).
struct Parsed {
  explicit Parsed(std::vector<std::byte> bytes)
      : message(std::move(bytes)), result(ParseRequest(message, ParseContext{})) {}
  const Request& request() const { return std::get<Request>(result); }
  const ParseError& error() const { return std::get<ParseError>(result); }
  bool malformed() const { return std::holds_alternative<ParseError>(result); }

  std::vector<std::byte> message;
  ParseResult result;
};

// A writer into a memory file, and the lines it wrote, each parsed.
class JsonTraceTest : public ::testing::Test {
 protected:
  std::vector<json> Lines() {
    writer_.Flush();
    std::string text(static_cast<size_t>(::lseek(file_, 0, SEEK_END)), '\0');
    EXPECT_EQ(::pread(file_, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
    std::vector<json> lines;
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
      lines.push_back(json::parse(text.substr(start, end - start)));  // throws if not JSON
    }
    EXPECT_EQ(start, text.size()) << "the file ends inside a line";
    return lines;
  }

  const int file_ = ::memfd_create("trace", MFD_CLOEXEC);
  JsonTraceWriter writer_{::dup(file_)};
};

TEST_F(JsonTraceTest, ARequestCarriesItsCallerAndFieldsAndItsReplyTheErrorAndLatency) {
  const Parsed parsed(LookupMessage(12, "etc"));
  writer_.OnRequest(parsed.request());
  writer_.OnReply(ReplyTarget{12, 0}, -ENOENT, {});
  const std::vector<json> lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  const json& request = lines[0];
  EXPECT_EQ(request["ev"], "request");
  EXPECT_EQ(request["unique"], 12);
  EXPECT_EQ(request["op"], "LOOKUP");
  EXPECT_EQ(request["nodeid"], 1);
  EXPECT_EQ(request["pid"], 42);
  EXPECT_EQ(request["uid"], 1000);
  EXPECT_EQ(request["gid"], 100);
  EXPECT_EQ(request["name"], "etc");
  const json& reply = lines[1];
  EXPECT_EQ(reply["ev"], "reply");
  EXPECT_EQ(reply["unique"], 12);
  EXPECT_EQ(reply["op"], "LOOKUP");
  EXPECT_EQ(reply["error"], -ENOENT);
  EXPECT_EQ(reply["errno"], "ENOENT");
  EXPECT_EQ(reply["size"], 0);
  EXPECT_GE(reply["t"].get<uint64_t>(), request["t"].get<uint64_t>());
  EXPECT_EQ(reply["latency_ns"].get<uint64_t>(),
            reply["t"].get<uint64_t>() - request["t"].get<uint64_t>());
}

TEST_F(JsonTraceTest, RepliesArePairedByUniqueInAnyOrder) {
  const Parsed first(LookupMessage(20, "a"));
  const Parsed second(testing::RequestMessage({.opcode = kMkdir, .unique = 22, .nodeid = 1},
                                              testing::Wire().U32(0755).U32(022).CString("d")));
  writer_.OnRequest(first.request());
  writer_.OnRequest(second.request());
  const std::byte body[8]{};
  const ConstBytes parts[] = {ConstBytes(body, 8), ConstBytes(body, 3)};
  writer_.OnReply(ReplyTarget{22, 0}, 0, parts);
  writer_.OnReply(ReplyTarget{20, 0}, 0, {});
  writer_.OnReply(ReplyTarget{20, 0}, 0, {});  // a second answer: its request is no longer known
  const std::vector<json> lines = Lines();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[1]["mode"], 0755);
  EXPECT_EQ(lines[2]["op"], "MKDIR");
  EXPECT_EQ(lines[2]["size"], 11);
  EXPECT_FALSE(lines[2].contains("errno"));
  EXPECT_EQ(lines[3]["op"], "LOOKUP");
  EXPECT_TRUE(lines[3].contains("latency_ns"));
  EXPECT_FALSE(lines[4].contains("op"));
  EXPECT_FALSE(lines[4].contains("latency_ns"));
}

TEST_F(JsonTraceTest, AMalformedMessageAppearsWithItsParseErrorAndItsAnswerIsPaired) {
  const Parsed parsed(testing::RequestMessage({.opcode = kLookup, .unique = 30, .nodeid = 1},
                                              testing::Wire().Text("no-terminator")));
  ASSERT_TRUE(parsed.malformed());
  writer_.OnMalformed(parsed.error());
  writer_.OnReply(ReplyTarget{30, 0}, -EIO, {});
  const std::vector<json> lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["ev"], "malformed");
  EXPECT_EQ(lines[0]["unique"], 30);
  EXPECT_EQ(lines[0]["op"], "LOOKUP");
  EXPECT_EQ(lines[0]["error"], "name without NUL");
  EXPECT_THAT(lines[0]["message"].get<std::string>(), HasSubstr("name without NUL in LOOKUP"));
  EXPECT_EQ(lines[1]["op"], "LOOKUP");
  EXPECT_EQ(lines[1]["errno"], "EIO");
}

TEST_F(JsonTraceTest, AShortHeaderHasNoUniqueToName) {
  const Parsed parsed(std::vector<std::byte>(10));
  ASSERT_TRUE(parsed.malformed());
  writer_.OnMalformed(parsed.error());
  const std::vector<json> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["error"], "short header");
  EXPECT_FALSE(lines[0].contains("unique"));
}

TEST_F(JsonTraceTest, NamesOfAnyBytesStayValidJson) {
  const std::string name = std::string("q\"b\\s\n\x01\x7f caf\xc3\xa9 \xe2\x82\xac ") +
                           "\xff \xc3 \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80";
  const Parsed parsed(LookupMessage(40, name));
  writer_.OnRequest(parsed.request());
  const std::vector<json> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  // Valid UTF-8 as is; each byte of an invalid sequence as the code point of the same number.
  EXPECT_EQ(lines[0]["name"],
            "q\"b\\s\n\x01\x7f caf\xc3\xa9 \xe2\x82\xac \xc3\xbf \xc3\x83 \xc3\x80\xc2\xaf "
            "\xc3\xad\xc2\xa0\xc2\x80 \xc3\xb4\xc2\x90\xc2\x80\xc2\x80");
}

// Worker threads trace at once, as a transport's do: every line whole, every reply paired.
TEST_F(JsonTraceTest, ThreadsTracingAtOnceWriteWholeLinesAndPairEveryReply) {
  constexpr int kThreads = 4, kEach = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < kEach; ++i) {
        const uint64_t unique = 2 * (uint64_t{1} + t + uint64_t{kThreads} * i);
        const Parsed parsed(LookupMessage(unique, "name-" + std::to_string(i)));
        writer_.OnRequest(parsed.request());
        writer_.OnReply(ReplyTarget{unique, 0}, 0, {});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  int requests = 0, paired = 0;
  for (const json& line : Lines()) {
    if (line["ev"] == "request") ++requests;
    if (line["ev"] == "reply" && line.contains("latency_ns") && line["op"] == "LOOKUP") ++paired;
  }
  EXPECT_EQ(requests, kThreads * kEach);
  EXPECT_EQ(paired, kThreads * kEach);
  EXPECT_EQ(writer_.dropped(), 0u);
}

TEST(JsonLine, EscapesControlsQuotesAndInvalidUtf8ButNotValidUtf8) {
  std::string out;
  internal::AppendJsonEscaped(out, "a\"\\\t\x7f\xc3\xa9\xf0\x9f\x98\x80\xe2\x82");
  EXPECT_EQ(out, "a\\\"\\\\\\u0009\\u007f\xc3\xa9\xf0\x9f\x98\x80\\u00e2\\u0082");
}

// A file that takes nothing (a full pipe nobody reads) costs events, never a wait: they are
// dropped past the buffer's bound, and the first line after says how many.
TEST(JsonTraceBound, AStuckFileDropsEventsInsteadOfBlockingAndSaysHowMany) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  ASSERT_GT(::fcntl(pipe_fds[1], F_SETPIPE_SZ, 4096), 0);
  const base::UniqueFd read_end(pipe_fds[0]);
  constexpr int kEvents = 2000;
  std::string received;
  std::thread reader;
  uint64_t dropped = 0;
  {
    JsonTraceWriter writer(pipe_fds[1], {.buffer_limit = 16 << 10});
    const Parsed parsed(LookupMessage(50, "x"));
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kEvents; ++i) writer.OnRequest(parsed.request());
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
    dropped = writer.dropped();
    EXPECT_GT(dropped, 0u);
    reader = std::thread([&] {
      char chunk[4096];
      for (ssize_t n; (n = ::read(read_end.get(), chunk, sizeof(chunk))) > 0;) {
        received.append(chunk, static_cast<size_t>(n));
      }
    });
    writer.Flush();  // the pipe drains: room again
    writer.OnRequest(parsed.request());
    EXPECT_EQ(writer.dropped(), dropped);
  }  // writes the rest and closes the pipe: the reader sees its end
  reader.join();
  uint64_t requests = 0, reported = 0;
  size_t start = 0;
  for (size_t end; (end = received.find('\n', start)) != std::string::npos; start = end + 1) {
    const json line = json::parse(received.substr(start, end - start));
    if (line["ev"] == "request") ++requests;
    if (line["ev"] == "dropped") reported += line["count"].get<uint64_t>();
  }
  EXPECT_EQ(reported, dropped);
  EXPECT_EQ(requests + reported, kEvents + 1u);
}

}  // namespace
}  // namespace ringfuse

namespace ringfuse {
namespace {

// The trace file of a root daemon, at a path in a directory anyone can write (/tmp), where
// another user plants a name first. Each planted name is refused and left as it was.
class TraceFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/ringfuse-trace-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    victim_ = dir_ + "/victim";
    WriteText(victim_, "precious\n");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static void WriteText(const std::string& path, std::string_view text) {
    const base::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    ASSERT_TRUE(fd.valid());
    ASSERT_EQ(::write(fd.get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  static std::string ReadText(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // Whether opening `path` both ways was refused, and the victim kept its bytes.
  void ExpectRefusedAndVictimKept(const std::string& path) {
    EXPECT_FALSE(JsonTraceWriter::CreateFile(path).ok());
    EXPECT_FALSE(JsonTraceWriter::AppendFile(path).ok());
    EXPECT_EQ(ReadText(victim_), "precious\n");
  }

  std::string dir_, victim_;
};

TEST_F(TraceFileTest, ASymlinkIsNotFollowed) {
  ASSERT_EQ(::symlink(victim_.c_str(), (dir_ + "/trace").c_str()), 0);
  ExpectRefusedAndVictimKept(dir_ + "/trace");
}

TEST_F(TraceFileTest, AHardLinkOfAnotherFileIsRefused) {
  ASSERT_EQ(::link(victim_.c_str(), (dir_ + "/trace").c_str()), 0);
  ExpectRefusedAndVictimKept(dir_ + "/trace");
}

TEST_F(TraceFileTest, AFileAnotherUserOwnsIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  ASSERT_EQ(::chown(victim_.c_str(), 4242, 4242), 0);
  ExpectRefusedAndVictimKept(victim_);
}

TEST_F(TraceFileTest, AFifoIsRefusedWithoutWaitingForAReader) {
  ASSERT_EQ(::mkfifo((dir_ + "/trace").c_str(), 0666), 0);
  ExpectRefusedAndVictimKept(dir_ + "/trace");
}

TEST_F(TraceFileTest, ADirectoryIsRefused) {
  ASSERT_EQ(::mkdir((dir_ + "/trace").c_str(), 0755), 0);
  ExpectRefusedAndVictimKept(dir_ + "/trace");
}

// The negative control of the refusals above: the daemon's own file is written, a new one
// readable by its user alone (the trace names every caller's files).
TEST_F(TraceFileTest, ANewFileIsPrivateAndAnOwnFileIsTruncatedOrAppendedTo) {
  const std::string path = dir_ + "/trace";
  absl::StatusOr<int> created = JsonTraceWriter::CreateFile(path);
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_EQ(::write(*created, "one\n", 4), 4);
  ::close(*created);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  absl::StatusOr<int> appended = JsonTraceWriter::AppendFile(path);
  ASSERT_TRUE(appended.ok()) << appended.status();
  ASSERT_EQ(::write(*appended, "two\n", 4), 4);
  ::close(*appended);
  EXPECT_EQ(ReadText(path), "one\ntwo\n");
  absl::StatusOr<int> again = JsonTraceWriter::CreateFile(path);
  ASSERT_TRUE(again.ok()) << again.status();
  ::close(*again);
  EXPECT_EQ(ReadText(path), "");
}

}  // namespace
}  // namespace ringfuse
