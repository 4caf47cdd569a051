// Replies made after the handler returned, from another thread, reach the kernel over every
// transport: through writev for the /dev/fuse transports, through the queue's inbox and its
// ring for uring-cmd.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "gtest/gtest.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::testing {
namespace {

constexpr uint64_t kFile = 2;
constexpr std::string_view kContents = "answered later, from another thread";

// Answers LOOKUP at once, and GETATTR and READ from its own thread a moment later.
class LateReplyFs : public Handler {
 public:
  LateReplyFs() : answerer_([this] { Answer(); }) {}
  ~LateReplyFs() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    answerer_.join();
  }

  void Lookup(const RequestContext&, const op::Lookup& args, EntryReply reply) override {
    if (args.name != "file") return reply.Error(ENOENT);
    reply.Ok(MakeEntry(kFile, 1, RegularFileAttr(kFile, kContents.size()), Timeout{}, Timeout{}));
  }
  void Getattr(const RequestContext& context, const op::Getattr&, AttrReply reply) override {
    const wire::Attr attr =
        context.nodeid() == kFile ? RegularFileAttr(kFile, kContents.size()) : RootDirectoryAttr();
    Later([reply = std::move(reply), attr]() mutable { reply.Ok(MakeAttrOut(attr, Timeout{})); });
  }
  void Open(const RequestContext&, const op::Open&, OpenReply reply) override {
    reply.Ok(MakeOpenOut(1, wire::kFopenDirectIo));
  }
  void Read(const RequestContext&, const op::Read& args, DataReply reply) override {
    const uint64_t start = std::min<uint64_t>(args.in.offset, kContents.size());
    const uint64_t end = std::min<uint64_t>(start + args.in.size, kContents.size());
    Later([reply = std::move(reply), start, end]() mutable {
      reply.Ok(AsBytes(kContents.substr(start, end - start)));
    });
  }
  void Release(const RequestContext&, const op::Release&, EmptyReply reply) override { reply.Ok(); }

  uint64_t answered() const { return answered_.load(); }

 private:
  void Later(absl::AnyInvocable<void()> answer) {
    {
      std::lock_guard lock(mutex_);
      pending_.push_back(std::move(answer));
    }
    changed_.notify_all();
  }

  void Answer() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
      if (pending_.empty()) return;
      absl::AnyInvocable<void()> answer = std::move(pending_.front());
      pending_.pop_front();
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      // Counted before answering: the client may see the answer before this thread runs on.
      ++answered_;
      answer();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<absl::AnyInvocable<void()>> pending_;
  bool stopping_ = false;
  std::atomic<uint64_t> answered_{0};
  std::thread answerer_;
};

class LateReplies : public TransportTest {
 protected:
  void SetUp() override {
    TransportTest::SetUp();
    if (IsSkipped()) return;
    absl::StatusOr<std::unique_ptr<ServedMount>> mount = ServedMount::Start(fs_, GetParam());
    ASSERT_TRUE(mount.ok()) << mount.status();
    mount_ = std::move(*mount);
  }

  LateReplyFs fs_;  // declared first: outlives the mount, so no reply is left unanswered
  std::unique_ptr<ServedMount> mount_;
};

TEST_P(LateReplies, StatFromManyClientsIsAnsweredFromAnotherThread) {
  const std::string path = mount_->Path("file");
  std::atomic<int> failures{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        struct stat st;
        if (::stat(path.c_str(), &st) != 0 || st.st_size != static_cast<off_t>(kContents.size())) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GE(fs_.answered(), 400u);
}

TEST_P(LateReplies, ReadDataAnsweredLaterArrivesIntact) {
  const int fd = ::open(mount_->Path("file").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  char buffer[256] = {};
  const ssize_t length = ::read(fd, buffer, sizeof(buffer));
  ::close(fd);
  EXPECT_EQ(std::string_view(buffer, length > 0 ? length : 0), kContents);
}

// Keeps the reply to the file's GETATTR and never answers it while the session lives.
class KeepsReplyFs : public Handler {
 public:
  void Lookup(const RequestContext&, const op::Lookup& args, EntryReply reply) override {
    if (args.name != "file") return reply.Error(ENOENT);
    wire::Attr attr{};
    attr.ino = kFile;
    attr.mode = S_IFREG | 0644;
    reply.Ok(MakeEntry(kFile, 1, attr, Timeout{}, Timeout{}));
  }
  void Getattr(const RequestContext& context, const op::Getattr&, AttrReply reply) override {
    if (context.nodeid() != kFile) {
      wire::Attr attr{};
      attr.ino = wire::kRootId;
      attr.mode = S_IFDIR | 0755;
      return reply.Ok(MakeAttrOut(attr, Timeout{}));
    }
    std::lock_guard lock(mutex_);
    kept_.emplace(std::move(reply));
  }
  bool holds() {
    std::lock_guard lock(mutex_);
    return kept_.has_value();
  }
  void AnswerNow() {
    std::lock_guard lock(mutex_);
    kept_->Error(EIO);
  }

 private:
  std::mutex mutex_;
  std::optional<AttrReply> kept_;
};

TEST_P(LateReplies, AReplyHeldPastTheSessionsEndIsHarmless) {
  KeepsReplyFs fs;
  std::unique_ptr<ServedMount> mount;
  {
    absl::StatusOr<std::unique_ptr<ServedMount>> started = ServedMount::Start(fs, GetParam());
    ASSERT_TRUE(started.ok()) << started.status();
    mount = std::move(*started);
  }
  const std::string path = mount->Path("file");
  std::thread client([path] {
    struct stat st;
    ::stat(path.c_str(), &st);  // fails once the session aborts the connection
  });
  for (int i = 0; i < 500 && !fs.holds(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(fs.holds());
  mount.reset();  // stops (aborting the connection the held request keeps alive) and frees
  client.join();
  fs.AnswerNow();  // reaches a closed channel: dropped, no use of freed memory (ASan checks)
}

INSTANTIATE_TEST_SUITE_P(Transports, LateReplies, kEveryTransport, TransportTestName);

}  // namespace
}  // namespace ringfuse::testing
