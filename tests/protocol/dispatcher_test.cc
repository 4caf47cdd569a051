// The dispatcher end to end: request bytes in, handler calls and reply bytes out.
#include "protocol/dispatcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ringfuse/protocol/reply_channel.h"
#include "tests/protocol/test_decoder.h"
#include "tests/protocol/wire.h"

namespace ringfuse {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::HeaderFields;
using ::testing::IsEmpty;
using testing::RequestMessage;
using ::testing::SizeIs;
using testing::Wire;

namespace flag = wire::init_flag;

struct SentReply {
  uint64_t unique;
  uint64_t slot;
  int32_t error;
  std::vector<std::byte> body;
};

class RecordingChannel : public ReplyChannel {
 public:
  void SendReply(const ReplyTarget& target, int32_t error,
                 std::span<const ConstBytes> body) override {
    SentReply reply{target.unique, target.slot, error, {}};
    for (ConstBytes part : body) reply.body.insert(reply.body.end(), part.begin(), part.end());
    std::lock_guard<std::mutex> lock(mutex_);
    replies_.push_back(std::move(reply));
  }

  std::vector<SentReply> replies() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return replies_;
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    replies_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::vector<SentReply> replies_;
};

class RecordingDiagnostics : public internal::Diagnostics {
 public:
  void Report(std::string_view line) override { lines.emplace_back(line); }
  std::vector<std::string> lines;
};

struct NodeCount {
  uint64_t nodeid;
  uint64_t nlookup;
  bool operator==(const NodeCount&) const = default;
};

class RecordingHandler : public Handler {
 public:
  enum class GetattrMode { kAnswer, kDrop, kKeep, kRunOutOfMemory };

  void Init(const Negotiated& negotiated) override { init_minor = negotiated.minor; }
  void Destroy() override { ++destroy_calls; }

  void Lookup(const RequestContext& context, const op::Lookup& args, EntryReply reply) override {
    names.emplace_back(args.name);
    interrupted.push_back(context.Interrupted());
    reply.Ok(MakeEntry(42, 1, wire::Attr{}, {}, {}));
  }
  void Getattr(const RequestContext& /*context*/, const op::Getattr& /*args*/,
               AttrReply reply) override {
    if (getattr_mode == GetattrMode::kAnswer) reply.Ok(MakeAttrOut(wire::Attr{}, {}));
    if (getattr_mode == GetattrMode::kKeep) kept.emplace(std::move(reply));
    if (getattr_mode == GetattrMode::kRunOutOfMemory) throw std::bad_alloc();
  }
  void Setxattr(const RequestContext& /*context*/, const op::Setxattr& args,
                EmptyReply reply) override {
    names.emplace_back(args.name);
    reply.Ok();
  }
  void Write(const RequestContext& /*context*/, const op::Write& args, CountReply reply) override {
    reply.Ok(args.data.size());
  }
  void CopyFileRange(const RequestContext& /*context*/, const op::CopyFileRange& args,
                     CountReply reply) override {
    reply.Ok(args.in.len);
  }
  void Forget(const RequestContext& context, const op::Forget& args) override {
    forgets.push_back({context.nodeid(), args.in.nlookup});
  }
  void BatchForget(const RequestContext& /*context*/, const op::BatchForget& args) override {
    for (uint32_t i = 0; i < args.forgets.size(); ++i) {
      forgets.push_back({args.forgets[i].nodeid, args.forgets[i].nlookup});
    }
  }

  GetattrMode getattr_mode = GetattrMode::kAnswer;
  std::optional<AttrReply> kept;
  uint32_t init_minor = 0;
  int destroy_calls = 0;
  std::vector<std::string> names;
  std::vector<bool> interrupted;
  std::vector<NodeCount> forgets;
};

constexpr uint32_t kLookup = 1, kForget = 2, kGetattr = 3, kWrite = 16, kSetxattr = 21, kInit = 26,
                   kInterrupt = 36, kDestroy = 38, kBatchForget = 42, kCopyFileRange = 47,
                   kCopyFileRange64 = 53;

// Everything a 7.45 kernel may offer.
constexpr uint64_t kAllFlags = (uint64_t{1} << 43) - 1;

std::vector<std::byte> Message(uint32_t opcode, uint64_t unique, const Wire& body,
                               uint64_t nodeid = 1) {
  return RequestMessage(HeaderFields{opcode, unique, nodeid, 1000, 1000, 77, 0}, body);
}

std::vector<std::byte> InitMessage(uint64_t unique, uint32_t major, uint32_t minor,
                                   uint64_t flags) {
  return Message(kInit, unique,
                 Wire()
                     .U32(major)
                     .U32(minor)
                     .U32(1 << 20)
                     .U32(static_cast<uint32_t>(flags))
                     .U32(static_cast<uint32_t>(flags >> 32))
                     .Zeros(44));
}

std::vector<std::byte> LookupMessage(uint64_t unique, std::string_view name) {
  return Message(kLookup, unique, Wire().CString(name));
}

std::vector<std::byte> GetattrMessage(uint64_t unique) {
  return Message(kGetattr, unique, Wire().U32(0).U32(0).U64(0));
}

std::vector<std::byte> CopyFileRangeMessage(uint32_t opcode, uint64_t unique, uint64_t len) {
  return Message(opcode, unique, Wire().U64(1).U64(0).U64(2).U64(3).U64(0).U64(len).U64(0));
}

// Fixed struct size and name count of every opcode at 7.45, so that a message of zeros plus
// one-letter names is valid (every size and count field is then 0).
struct Shape {
  uint32_t opcode;
  size_t fixed;
  int names;
};
constexpr Shape kShapes[] = {
    {1, 0, 1},   {2, 8, 0},   {3, 16, 0},  {4, 88, 0},  {5, 0, 0},   {6, 0, 2},   {8, 16, 1},
    {9, 8, 1},   {10, 0, 1},  {11, 0, 1},  {12, 8, 2},  {13, 8, 1},  {14, 8, 0},  {15, 40, 0},
    {16, 40, 0}, {17, 0, 0},  {18, 24, 0}, {20, 16, 0}, {21, 16, 1}, {22, 8, 1},  {23, 8, 0},
    {24, 0, 1},  {25, 24, 0}, {26, 64, 0}, {27, 8, 0},  {28, 40, 0}, {29, 24, 0}, {30, 16, 0},
    {31, 48, 0}, {32, 48, 0}, {33, 48, 0}, {34, 8, 0},  {35, 16, 1}, {36, 8, 0},  {37, 16, 0},
    {38, 0, 0},  {39, 32, 0}, {40, 24, 0}, {41, 40, 0}, {42, 8, 0},  {43, 32, 0}, {44, 40, 0},
    {45, 16, 2}, {46, 24, 0}, {47, 56, 0}, {48, 40, 0}, {49, 4, 0},  {50, 8, 0},  {51, 16, 1},
    {52, 24, 0}, {53, 56, 0},
};

std::vector<std::byte> MinimalMessage(const Shape& shape, uint64_t unique) {
  Wire body;
  body.Zeros(shape.fixed);
  for (int i = 0; i < shape.names; ++i) body.CString("n");
  return Message(shape.opcode, unique, body);
}

bool NoReplyExpected(uint32_t opcode) {
  return opcode == kForget || opcode == kInterrupt || opcode == 41 || opcode == kBatchForget;
}

class DispatcherTest : public ::testing::Test {
 protected:
  void Dispatch(const std::vector<std::byte>& message, internal::Delivery delivery = {}) {
    dispatcher_.Dispatch(message, delivery);
  }

  // Completes INIT as a 7.45 kernel offering everything, then forgets its reply.
  void Initialize(uint32_t minor = 45, uint64_t flags = kAllFlags) {
    Dispatch(InitMessage(1, 7, minor, flags));
    ASSERT_EQ(dispatcher_.state(), internal::ConnectionState::kRunning);
    channel_.Clear();
    diagnostics_.lines.clear();
  }

  SentReply OnlyReply() const {
    const std::vector<SentReply> replies = channel_.replies();
    if (replies.size() != 1) {
      ADD_FAILURE() << replies.size() << " replies, expected one";
      return SentReply{};
    }
    return replies[0];
  }

  // Declared before the handler: a reply the handler still holds answers into it on destruction.
  RecordingChannel channel_;
  RecordingDiagnostics diagnostics_;
  RecordingHandler handler_;
  internal::Dispatcher dispatcher_{handler_, channel_, diagnostics_, InitWishes{}};
};

TEST_F(DispatcherTest, InitIsAnsweredWith64ByteInitOutAndStartsRunning) {
  Dispatch(InitMessage(9, 7, 45, kAllFlags));

  const SentReply reply = OnlyReply();
  EXPECT_EQ(reply.unique, 9u);
  EXPECT_EQ(reply.error, 0);
  ASSERT_THAT(reply.body, SizeIs(testing::kInitOutSize));
  const testing::DecodedInitOut out = testing::DecodeInitOut(reply.body, 0);
  EXPECT_EQ(out.major, 7u);
  EXPECT_EQ(out.minor, 45u);
  EXPECT_EQ(dispatcher_.state(), internal::ConnectionState::kRunning);
  EXPECT_EQ(handler_.init_minor, 45u);
  EXPECT_THAT(diagnostics_.lines, IsEmpty());
}

TEST_F(DispatcherTest, ParseContextFollowsTheNegotiatedMinorAndSetxattrExt) {
  Dispatch(InitMessage(1, 7, 40, kAllFlags));
  EXPECT_EQ(dispatcher_.parse_context().minor, 40u);
  EXPECT_TRUE(dispatcher_.parse_context().setxattr_ext);
  EXPECT_EQ(dispatcher_.negotiated().minor, 40u);
}

TEST_F(DispatcherTest, WithoutSetxattrExtSetxattrIsParsedWithTheCompatStruct) {
  Dispatch(InitMessage(1, 7, 36, kAllFlags & ~flag::kSetxattrExt));
  ASSERT_EQ(dispatcher_.state(), internal::ConnectionState::kRunning);
  EXPECT_EQ(dispatcher_.parse_context().minor, 36u);
  EXPECT_FALSE(dispatcher_.parse_context().setxattr_ext);
  channel_.Clear();

  Dispatch(Message(kSetxattr, 5, Wire().U32(1).U32(0).CString("user.a").U8('v')));
  EXPECT_EQ(OnlyReply().error, 0);
  EXPECT_THAT(handler_.names, ElementsAre("user.a"));
}

TEST_F(DispatcherTest, ARequestBeforeInitGetsEio) {
  Dispatch(GetattrMessage(5));
  const SentReply reply = OnlyReply();
  EXPECT_EQ(reply.unique, 5u);
  EXPECT_EQ(reply.error, -EIO);
  EXPECT_EQ(dispatcher_.state(), internal::ConnectionState::kAwaitingInit);
  EXPECT_THAT(diagnostics_.lines, ElementsAre(HasSubstr("GETATTR")));
}

TEST_F(DispatcherTest, ASecondInitGetsEio) {
  Initialize();
  Dispatch(InitMessage(2, 7, 45, kAllFlags));
  const SentReply reply = OnlyReply();
  EXPECT_EQ(reply.unique, 2u);
  EXPECT_EQ(reply.error, -EIO);
  EXPECT_EQ(dispatcher_.state(), internal::ConnectionState::kRunning);
  EXPECT_THAT(diagnostics_.lines, ElementsAre(HasSubstr("INIT")));
}

TEST_F(DispatcherTest, InitWithMajor8GetsEprotoAndFails) {
  Dispatch(InitMessage(3, 8, 1, kAllFlags));
  const SentReply reply = OnlyReply();
  EXPECT_EQ(reply.unique, 3u);
  EXPECT_EQ(reply.error, -EPROTO);
  EXPECT_EQ(dispatcher_.state(), internal::ConnectionState::kInitFailed);
  EXPECT_THAT(diagnostics_.lines, ElementsAre(HasSubstr("8.1")));
}

TEST_F(DispatcherTest, InitWithMinor30GetsEprotoAndFails) {
  Dispatch(InitMessage(3, 7, 30, kAllFlags));
  EXPECT_EQ(OnlyReply().error, -EPROTO);
  EXPECT_EQ(dispatcher_.state(), internal::ConnectionState::kInitFailed);
  EXPECT_THAT(diagnostics_.lines, ElementsAre(HasSubstr("7.30")));
}

TEST_F(DispatcherTest, EveryReplyingOpcodeGetsEnosysFromTheBaseHandler) {
  Handler base;
  internal::Dispatcher dispatcher(base, channel_, diagnostics_, InitWishes{});
  dispatcher.Dispatch(InitMessage(1, 7, 45, kAllFlags), {});
  channel_.Clear();
  int tested = 0;
  for (const Shape& shape : kShapes) {
    if (NoReplyExpected(shape.opcode) || shape.opcode == kInit || shape.opcode == kDestroy) {
      continue;
    }
    SCOPED_TRACE(OpcodeName(shape.opcode));
    const uint64_t unique = 100 + shape.opcode;
    dispatcher.Dispatch(MinimalMessage(shape, unique), {});
    const SentReply reply = OnlyReply();
    EXPECT_EQ(reply.unique, unique);
    EXPECT_EQ(reply.error, -ENOSYS);
    EXPECT_THAT(reply.body, IsEmpty());
    channel_.Clear();
    ++tested;
  }
  EXPECT_EQ(tested, 45);
  EXPECT_THAT(diagnostics_.lines, IsEmpty());
}

TEST_F(DispatcherTest, EveryMalformedReplyingRequestGetsOneEioAndOneDiagnostic) {
  Initialize();
  for (const Shape& shape : kShapes) {
    if (NoReplyExpected(shape.opcode)) continue;
    SCOPED_TRACE(OpcodeName(shape.opcode));
    std::vector<std::byte> message = MinimalMessage(shape, 7);
    message[0] = static_cast<std::byte>(std::to_integer<uint8_t>(message[0]) + 1);  // len + 1
    Dispatch(message);
    const SentReply reply = OnlyReply();
    EXPECT_EQ(reply.unique, 7u);
    EXPECT_EQ(reply.error, -EIO);
    ASSERT_THAT(diagnostics_.lines, SizeIs(1));
    EXPECT_THAT(diagnostics_.lines[0], HasSubstr(OpcodeName(shape.opcode)));
    channel_.Clear();
    diagnostics_.lines.clear();
  }
  EXPECT_EQ(dispatcher_.state(), internal::ConnectionState::kRunning);
}

TEST_F(DispatcherTest, ATruncatedArgumentGetsEioNamingTheOpcode) {
  Initialize();
  std::vector<std::byte> message = Message(kGetattr, 11, Wire().U32(0).U32(0));
  Dispatch(message);
  const SentReply reply = OnlyReply();
  EXPECT_EQ(reply.unique, 11u);
  EXPECT_EQ(reply.error, -EIO);
  EXPECT_THAT(diagnostics_.lines, ElementsAre(HasSubstr("GETATTR")));
  EXPECT_EQ(dispatcher_.malformed_count(), 1u);
}

TEST_F(DispatcherTest, AShortHeaderWithAReadableUniqueGetsEio) {
  Initialize();
  const std::vector<std::byte> whole = GetattrMessage(12);
  Dispatch({whole.begin(), whole.begin() + 20});
  const SentReply reply = OnlyReply();
  EXPECT_EQ(reply.unique, 12u);
  EXPECT_EQ(reply.error, -EIO);
  EXPECT_THAT(diagnostics_.lines, ElementsAre(HasSubstr("GETATTR")));
}

TEST_F(DispatcherTest, AShortHeaderWithoutUniqueIsOnlyReported) {
  Initialize();
  const std::vector<std::byte> whole = GetattrMessage(12);
  Dispatch({whole.begin(), whole.begin() + 10});
  EXPECT_THAT(channel_.replies(), IsEmpty());
  EXPECT_THAT(diagnostics_.lines, SizeIs(1));
}

TEST_F(DispatcherTest, MalformedRequestsWithoutRepliesAreOnlyReported) {
  Initialize();
  const std::pair<uint32_t, std::string_view> kSilent[] = {{kForget, "FORGET"},
                                                           {kBatchForget, "BATCH_FORGET"},
                                                           {kInterrupt, "INTERRUPT"},
                                                           {41, "NOTIFY_REPLY"}};
  for (const auto& [opcode, name] : kSilent) {
    SCOPED_TRACE(name);
    Dispatch(Message(opcode, 13, Wire().U32(1)));  // shorter than any of their structs
    EXPECT_THAT(channel_.replies(), IsEmpty());
    ASSERT_THAT(diagnostics_.lines, SizeIs(1));
    EXPECT_THAT(diagnostics_.lines[0], HasSubstr(std::string(name)));
    diagnostics_.lines.clear();
  }
}

TEST_F(DispatcherTest, AnUnknownOpcodeGetsEnosys) {
  Initialize();
  for (uint32_t opcode : {7u, 19u, 54u, 4096u}) {
    Dispatch(Message(opcode, 14, Wire().U64(0)));
    const SentReply reply = OnlyReply();
    EXPECT_EQ(reply.unique, 14u);
    EXPECT_EQ(reply.error, -ENOSYS) << opcode;
    channel_.Clear();
  }
}

TEST_F(DispatcherTest, AValidRequestAfterMalformedOnesIsHandled) {
  Initialize();
  Dispatch(Message(kLookup, 15, Wire().Text("no-nul")));
  Dispatch(Message(99, 16, Wire()));
  Dispatch({std::byte{1}, std::byte{2}});
  channel_.Clear();

  Dispatch(LookupMessage(17, "fine"));
  const SentReply reply = OnlyReply();
  EXPECT_EQ(reply.unique, 17u);
  EXPECT_EQ(reply.error, 0);
  EXPECT_THAT(handler_.names, ElementsAre("fine"));
  EXPECT_EQ(dispatcher_.malformed_count(), 3u);
}

class RecordingObserver : public RequestObserver {
 public:
  void OnRequest(const Request& request) override { uniques.push_back(request.header.unique); }
  void OnMalformed(const ParseError& error) override { malformed.push_back(error.kind); }
  void OnReply(const ReplyTarget& target, int32_t error,
               std::span<const ConstBytes> /*body*/) override {
    replies.emplace_back(target.unique, error);
  }
  std::vector<uint64_t> uniques;
  std::vector<ParseErrorKind> malformed;
  std::vector<std::pair<uint64_t, int32_t>> replies;
};

TEST_F(DispatcherTest, AnAttachedObserverSeesEveryRequestReplyAndMalformedMessage) {
  Initialize();
  RecordingObserver observer;
  dispatcher_.set_observer(&observer);
  Dispatch(LookupMessage(21, "seen"));
  Dispatch(Message(kLookup, 22, Wire().Text("no-nul")));
  dispatcher_.set_observer(nullptr);
  Dispatch(LookupMessage(23, "unseen"));
  EXPECT_THAT(observer.uniques, ElementsAre(21u));
  EXPECT_THAT(observer.malformed, ElementsAre(ParseErrorKind::kNameWithoutNul));
  EXPECT_THAT(observer.replies, ElementsAre(std::make_pair(21u, 0), std::make_pair(22u, -EIO)));
}

// A handler that drops its reply, or throws bad_alloc before answering: the request still gets
// its one EIO and the dispatcher lives on; running out of memory is also reported.
TEST_F(DispatcherTest, AHandlerThatDropsTheReplyOrRunsOutOfMemoryProducesEio) {
  Initialize();
  for (auto mode :
       {RecordingHandler::GetattrMode::kDrop, RecordingHandler::GetattrMode::kRunOutOfMemory}) {
    handler_.getattr_mode = mode;
    channel_.Clear();
    Dispatch(GetattrMessage(18));
    const SentReply reply = OnlyReply();
    EXPECT_EQ(reply.unique, 18u);
    EXPECT_EQ(reply.error, -EIO);
  }
  EXPECT_THAT(diagnostics_.lines, ElementsAre(HasSubstr("ran out of memory")));
}

TEST_F(DispatcherTest, AHandlerMayAnswerLaterFromAnotherThread) {
  Initialize();
  handler_.getattr_mode = RecordingHandler::GetattrMode::kKeep;
  Dispatch(GetattrMessage(19), internal::Delivery{.slot = 3});
  EXPECT_THAT(channel_.replies(), IsEmpty());
  ASSERT_TRUE(handler_.kept.has_value());

  std::thread answerer([this] { handler_.kept->Ok(MakeAttrOut(wire::Attr{}, {})); });
  answerer.join();
  const SentReply reply = OnlyReply();
  EXPECT_EQ(reply.unique, 19u);
  EXPECT_EQ(reply.slot, 3u);
  EXPECT_EQ(reply.error, 0);
  EXPECT_THAT(reply.body, SizeIs(testing::kAttrOutSize));
}

TEST_F(DispatcherTest, ForgetAndBatchForgetReachTheHandlerAndAreNotAnswered) {
  Initialize();
  Dispatch(Message(kForget, 20, Wire().U64(3), /*nodeid=*/55));
  Dispatch(Message(kBatchForget, 21, Wire().U32(2).U32(0).U64(66).U64(4).U64(77).U64(5)));
  EXPECT_THAT(handler_.forgets, ElementsAre(NodeCount{55, 3}, NodeCount{66, 4}, NodeCount{77, 5}));
  EXPECT_THAT(channel_.replies(), IsEmpty());
  EXPECT_THAT(diagnostics_.lines, IsEmpty());
}

TEST_F(DispatcherTest, DestroyCallsTheHandlerAndIsAnswered) {
  Initialize();
  Dispatch(Message(kDestroy, 22, Wire()));
  EXPECT_EQ(handler_.destroy_calls, 1);
  const SentReply reply = OnlyReply();
  EXPECT_EQ(reply.unique, 22u);
  EXPECT_EQ(reply.error, 0);
  EXPECT_THAT(reply.body, IsEmpty());
  EXPECT_EQ(dispatcher_.state(), internal::ConnectionState::kDestroyed);
}

TEST_F(DispatcherTest, WriteIsAnsweredWithAn8ByteWriteOut) {
  Initialize();
  Dispatch(
      Message(kWrite, 23, Wire().U64(1).U64(0).U32(5).U32(0).U64(0).U32(0).U32(0).Text("hello")));
  const SentReply reply = OnlyReply();
  ASSERT_THAT(reply.body, SizeIs(8));
  EXPECT_EQ(testing::U32At(reply.body, 0), 5u);
  EXPECT_EQ(testing::U32At(reply.body, 4), 0u);
}

TEST_F(DispatcherTest, CopyFileRange64IsAnsweredWithA64BitCount) {
  Initialize();
  const uint64_t len = (uint64_t{1} << 32) + 5;
  Dispatch(CopyFileRangeMessage(kCopyFileRange64, 24, len));
  const SentReply reply = OnlyReply();
  ASSERT_THAT(reply.body, SizeIs(8));
  EXPECT_EQ(testing::U64At(reply.body, 0), len);
}

TEST_F(DispatcherTest, CopyFileRangeIsAnsweredWithAWriteOut) {
  Initialize();
  Dispatch(CopyFileRangeMessage(kCopyFileRange, 25, 0x12345));
  const SentReply reply = OnlyReply();
  ASSERT_THAT(reply.body, SizeIs(8));
  EXPECT_EQ(testing::U32At(reply.body, 0), 0x12345u);
  EXPECT_EQ(testing::U32At(reply.body, 4), 0u);
}

TEST_F(DispatcherTest, TheDeliverySlotIsEchoedInEveryKindOfReply) {
  Initialize();
  Dispatch(LookupMessage(26, "x"), internal::Delivery{.slot = 101});
  Dispatch(Message(kLookup, 27, Wire().Text("bad")), internal::Delivery{.slot = 102});
  Dispatch(Message(54, 28, Wire()), internal::Delivery{.slot = 103});
  handler_.getattr_mode = RecordingHandler::GetattrMode::kDrop;
  Dispatch(GetattrMessage(29), internal::Delivery{.slot = 104});

  const std::vector<SentReply> replies = channel_.replies();
  ASSERT_THAT(replies, SizeIs(4));
  for (size_t i = 0; i < replies.size(); ++i) {
    EXPECT_EQ(replies[i].unique, 26 + i);
    EXPECT_EQ(replies[i].slot, 101 + i);
  }
}

TEST_F(DispatcherTest, ContextInterruptedReflectsTheDeliveredFlag) {
  Initialize();
  std::atomic<bool> flag_value{false};
  Dispatch(LookupMessage(30, "a"), internal::Delivery{.interrupted = &flag_value});
  flag_value = true;
  Dispatch(LookupMessage(31, "b"), internal::Delivery{.interrupted = &flag_value});
  Dispatch(LookupMessage(32, "c"));
  EXPECT_THAT(handler_.interrupted, ElementsAre(false, true, false));
}

TEST_F(DispatcherTest, DispatchRingHandlesLookup) {
  Initialize();
  const std::vector<std::byte> message = LookupMessage(33, "ring-name");
  const std::vector<std::byte> in_out(message.begin(), message.begin() + 40);
  const std::vector<std::byte> op_in(128);
  const std::vector<std::byte> payload(message.begin() + 40, message.end());
  dispatcher_.DispatchRing(in_out, op_in, payload, internal::Delivery{.slot = 8});

  EXPECT_THAT(handler_.names, ElementsAre("ring-name"));
  const SentReply reply = OnlyReply();
  EXPECT_EQ(reply.unique, 33u);
  EXPECT_EQ(reply.slot, 8u);
  EXPECT_EQ(reply.error, 0);
  ASSERT_THAT(reply.body, SizeIs(testing::kEntryOutSize));
  EXPECT_EQ(testing::DecodeEntryOut(reply.body, 0).nodeid, 42u);
}

}  // namespace
}  // namespace ringfuse
