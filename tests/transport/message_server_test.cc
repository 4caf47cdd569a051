// MessageServer, the public request path for a custom transport (ringfuse/protocol.h): MemFs
// served from messages this test writes, its replies taken from a channel of the test's own. No
// kernel, and nothing of the library's inside: what a transport author has.
#include "ringfuse/protocol/message_server.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "examples/memfs/memfs.h"
#include "ringfuse/protocol.h"
#include "tests/protocol/wire.h"

namespace ringfuse {
namespace {

using examples::MemFs;
using testing::RequestMessage;
using testing::Wire;

// The channel of the transport under test: each reply's error by unique.
class Replies : public ReplyChannel {
 public:
  void SendReply(const ReplyTarget& target, int32_t error,
                 std::span<const ConstBytes> /*body*/) override {
    std::lock_guard lock(mutex_);
    errors_[target.unique].push_back(error);
  }
  std::vector<int32_t> To(uint64_t unique) {
    std::lock_guard lock(mutex_);
    return errors_[unique];
  }

 private:
  std::mutex mutex_;
  std::map<uint64_t, std::vector<int32_t>> errors_;
};

class MessageServerTest : public ::testing::Test {
 protected:
  void Serve(uint32_t opcode, uint64_t unique, uint64_t nodeid, const Wire& body,
             size_t worker = 0) {
    const std::vector<std::byte> message =
        RequestMessage({opcode, unique, nodeid, 0, 0, 1, 0}, body);
    ASSERT_TRUE(server_.Serve(worker, message, replies_).ok());
  }
  void Init() {
    Wire offer;
    offer.U32(7).U32(45).U32(1 << 20).U32(wire::init_flag::kInitExt).U32(0).Zeros(44);
    Serve(static_cast<uint32_t>(Opcode::kInit), 2, 0, offer);
  }

  MemFs fs_;
  Replies replies_;
  MessageServer server_{fs_, /*workers=*/2};
};

TEST_F(MessageServerTest, AnswersInitThenRoutesRequestsToTheHandler) {
  EXPECT_FALSE(server_.running());
  Init();
  EXPECT_EQ(replies_.To(2), std::vector<int32_t>{0});
  EXPECT_TRUE(server_.running());
  Serve(static_cast<uint32_t>(Opcode::kLookup), 4, wire::kRootId, Wire().CString("nope"), 1);
  EXPECT_EQ(replies_.To(4), std::vector<int32_t>{-ENOENT}) << "MemFs's answer, from worker 1";
}

TEST_F(MessageServerTest, AnswersWhatCannotBeHandledAndServesOn) {
  Init();
  // A LOOKUP whose name lacks its NUL: malformed, answered EIO.
  Serve(static_cast<uint32_t>(Opcode::kLookup), 6, wire::kRootId, Wire().U8('x'));
  EXPECT_EQ(replies_.To(6), std::vector<int32_t>{-EIO});
  // An opcode this library does not know: ENOSYS, as from a kernel newer than it.
  Serve(4000, 8, wire::kRootId, Wire());
  EXPECT_EQ(replies_.To(8), std::vector<int32_t>{-ENOSYS});
  Serve(static_cast<uint32_t>(Opcode::kLookup), 10, wire::kRootId, Wire().CString("nope"));
  EXPECT_EQ(replies_.To(10), std::vector<int32_t>{-ENOENT});
}

// Each reply goes to the channel its Serve names: a transport's worker has its own.
TEST_F(MessageServerTest, RepliesGoToTheChannelServeNames) {
  Init();
  Replies other;
  const std::vector<std::byte> lookup =
      RequestMessage({static_cast<uint32_t>(Opcode::kLookup), 12, wire::kRootId, 0, 0, 1, 0},
                     Wire().CString("nope"));
  ASSERT_TRUE(server_.Serve(1, lookup, other).ok());
  EXPECT_EQ(other.To(12), std::vector<int32_t>{-ENOENT});
  EXPECT_TRUE(replies_.To(12).empty());
}

TEST_F(MessageServerTest, AWorkerIndexBeyondTheWorkersIsRefused) {
  Init();
  const std::vector<std::byte> lookup =
      RequestMessage({static_cast<uint32_t>(Opcode::kLookup), 14, wire::kRootId, 0, 0, 1, 0},
                     Wire().CString("nope"));
  EXPECT_EQ(server_.Serve(2, lookup, replies_).code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(replies_.To(14).empty()) << "nothing is served";
}

}  // namespace
}  // namespace ringfuse
