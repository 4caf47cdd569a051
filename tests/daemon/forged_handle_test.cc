// Every operation that takes an fh, called on PassthroughFs with fh values it never gave out or
// has taken back: each is answered EBADF, and nothing is dereferenced (ASan would say). And an
// OPEN the kernel never sends, of a FIFO or a socket, is refused at once rather than blocking.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "daemon/fs/passthrough_fs.h"
#include "gtest/gtest.h"
#include "ringfuse/protocol/reply_channel.h"
#include "tests/daemon/test_files.h"

namespace ringfuse::daemon {
namespace {

// Keeps each reply's error and body by request unique.
class RecordingChannel : public ReplyChannel {
 public:
  void SendReply(const ReplyTarget& target, int32_t error,
                 std::span<const ConstBytes> body) override {
    absl::MutexLock lock(&mutex_);
    std::vector<std::byte>& bytes = bodies_[target.unique];
    for (ConstBytes part : body) bytes.insert(bytes.end(), part.begin(), part.end());
    errors_[target.unique] = error;
  }
  std::optional<int32_t> ErrorOf(uint64_t unique) {
    absl::MutexLock lock(&mutex_);
    auto known = errors_.find(unique);
    if (known == errors_.end()) return std::nullopt;
    return known->second;
  }
  std::vector<std::byte> BodyOf(uint64_t unique) {
    absl::MutexLock lock(&mutex_);
    return bodies_[unique];
  }

 private:
  absl::Mutex mutex_;
  std::map<uint64_t, int32_t> errors_ ABSL_GUARDED_BY(mutex_);
  std::map<uint64_t, std::vector<std::byte>> bodies_ ABSL_GUARDED_BY(mutex_);
};

class ForgedHandles : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(source_.path().empty());
    DaemonOptions options;
    options.source = source_.path();
    fs_ = std::make_unique<PassthroughFs>(
        base::UniqueFd(::open(source_.path().c_str(), O_PATH | O_CLOEXEC)), options);
  }

  // The context of request `unique_` on `nodeid`, from this process. Context and Token only
  // read `unique_` (a call's arguments are evaluated in any order): each request moves it on.
  RequestContext Context(uint64_t nodeid) {
    header_.unique = unique_;
    header_.nodeid = nodeid;
    header_.pid = static_cast<uint32_t>(::getpid());
    return RequestContext{header_, extensions_};
  }
  ReplyToken Token() { return channel_.Promise({unique_, 0}); }
  std::optional<int32_t> Answer() { return channel_.ErrorOf(unique_); }

  // The fh of an OpenOut that ends the last reply's body.
  uint64_t LastFh() {
    const std::vector<std::byte> body = channel_.BodyOf(unique_);
    wire::OpenOut open{};
    if (body.size() >= sizeof(open)) {
      std::memcpy(&open, body.data() + body.size() - sizeof(open), sizeof(open));
    }
    return open.fh;
  }

  // Creates `name` in SOURCE's root through the handler: its node id and fh.
  std::pair<uint64_t, uint64_t> CreateFile(const std::string& name) {
    op::Create create{};
    create.in.flags = O_RDWR;
    create.in.mode = 0644;
    create.name = name;
    ++unique_;
    fs_->Create(Context(1), create, CreateReply(Token()));
    EXPECT_EQ(Answer(), 0);
    wire::EntryOut entry{};
    const std::vector<std::byte> body = channel_.BodyOf(unique_);
    if (body.size() >= sizeof(entry)) std::memcpy(&entry, body.data(), sizeof(entry));
    return {entry.nodeid, LastFh()};
  }
  // Looks `name` up in SOURCE's root through the handler: its node id.
  uint64_t LookupNode(const std::string& name) {
    ++unique_;
    fs_->Lookup(Context(1), op::Lookup{.name = name}, EntryReply(Token()));
    EXPECT_EQ(Answer(), 0) << name;
    wire::EntryOut entry{};
    const std::vector<std::byte> body = channel_.BodyOf(unique_);
    if (body.size() >= sizeof(entry)) std::memcpy(&entry, body.data(), sizeof(entry));
    return entry.nodeid;
  }
  uint64_t OpenRootDir() {
    ++unique_;
    fs_->Opendir(Context(1), op::Opendir{}, OpenReply(Token()));
    EXPECT_EQ(Answer(), 0);
    return LastFh();
  }

  // Every operation that takes an fh, with `file` and `dir` as the fh of each: the errors.
  std::map<std::string, std::optional<int32_t>> EveryOperation(uint64_t node, uint64_t file,
                                                               uint64_t dir) {
    std::map<std::string, std::optional<int32_t>> answers;
    auto call = [&](const std::string& name, const std::function<void()>& request) {
      ++unique_;
      request();
      answers[name] = Answer();
    };
    static const std::byte kData[4] = {};
    call("READ", [&] {
      op::Read args{};
      args.in.fh = file;
      args.in.size = 4;
      fs_->Read(Context(node), args, DataReply(Token()));
    });
    call("WRITE", [&] {
      op::Write args{};
      args.in.fh = file;
      args.data = ConstBytes(kData, sizeof(kData));
      fs_->Write(Context(node), args, CountReply(Token(), false));
    });
    call("FLUSH", [&] {
      op::Flush args{};
      args.in.fh = file;
      fs_->Flush(Context(node), args, EmptyReply(Token()));
    });
    call("FSYNC", [&] {
      op::Fsync args{};
      args.in.fh = file;
      fs_->Fsync(Context(node), args, EmptyReply(Token()));
    });
    call("FALLOCATE", [&] {
      op::Fallocate args{};
      args.in.fh = file;
      args.in.length = 4;
      fs_->Fallocate(Context(node), args, EmptyReply(Token()));
    });
    call("LSEEK", [&] {
      op::Lseek args{};
      args.in.fh = file;
      args.in.whence = SEEK_DATA;
      fs_->Lseek(Context(node), args, LseekReply(Token()));
    });
    call("COPY_FILE_RANGE", [&] {
      op::CopyFileRange args{};
      args.in.fh_in = file;
      args.in.fh_out = file;
      args.in.len = 4;
      fs_->CopyFileRange(Context(node), args, CountReply(Token(), true));
    });
    call("GETLK", [&] {
      op::Getlk args{};
      args.in.fh = file;
      args.in.lk.type = F_WRLCK;
      args.in.lk.end = 9;
      fs_->Getlk(Context(node), args, LockReply(Token()));
    });
    auto set_lock = [&](uint32_t lk_flags) {
      op::Setlk args{};
      args.in.fh = file;
      args.in.lk.type = F_WRLCK;
      args.in.lk_flags = lk_flags;
      fs_->Setlk(Context(node), args, EmptyReply(Token()));
    };
    call("SETLK", [&] { set_lock(0); });
    call("SETLK flock", [&] { set_lock(wire::kLkFlock); });
    call("SETATTR size by fh", [&] {
      op::Setattr args{};
      args.in.valid = wire::kFattrFh | wire::kFattrSize;
      args.in.fh = file;
      fs_->Setattr(Context(node), args, AttrReply(Token()));
    });
    call("READDIR", [&] {
      op::Readdir args{};
      args.in.fh = dir;
      args.in.size = 4096;
      fs_->Readdir(Context(1), args, DirReply(Token(), args.in));
    });
    call("READDIRPLUS", [&] {
      op::Readdirplus args{};
      args.in.fh = dir;
      args.in.size = 4096;
      fs_->Readdirplus(Context(1), args, DirPlusReply(Token(), args.in));
    });
    call("FSYNCDIR", [&] {
      op::Fsyncdir args{};
      args.in.fh = dir;
      fs_->Fsyncdir(Context(1), args, EmptyReply(Token()));
    });
    call("RELEASEDIR", [&] {
      op::Releasedir args{};
      args.in.fh = dir;
      fs_->Releasedir(Context(1), args, EmptyReply(Token()));
    });
    call("RELEASE", [&] {
      op::Release args{};
      args.in.fh = file;
      fs_->Release(Context(node), args, EmptyReply(Token()));
    });
    return answers;
  }

  void ExpectEveryOperationEbadf(uint64_t node, uint64_t file, uint64_t dir) {
    for (const auto& [name, answer] : EveryOperation(node, file, dir)) {
      EXPECT_EQ(answer, -EBADF) << name << " with file fh " << file << ", dir fh " << dir;
    }
  }

  ringfuse::testing::TempDir source_{"ringfuse-forged"};
  std::unique_ptr<PassthroughFs> fs_;
  wire::InHeader header_{};
  Extensions extensions_;
  uint64_t unique_ = 0;
  RecordingChannel channel_;
};

TEST_F(ForgedHandles, FhValuesNeverGivenOutAreEbadf) {
  const auto [node, file] = CreateFile("file");
  const uint64_t dir = OpenRootDir();
  for (uint64_t forged : {uint64_t{0}, uint64_t{0xdeadbeef}, uint64_t{1} << 47,
                          std::numeric_limits<uint64_t>::max(), file + 1000, dir + 1000}) {
    ExpectEveryOperationEbadf(node, forged, forged);
  }
  // Each kind of fh is no fh of the other kind.
  ExpectEveryOperationEbadf(node, dir, file);
}

TEST_F(ForgedHandles, ReleasedFhValuesAreEbadf) {
  const auto [node, file] = CreateFile("file");
  const uint64_t dir = OpenRootDir();
  // The negative control: the same calls with the live handles are no EBADF.
  for (const auto& [name, answer] : EveryOperation(node, file, dir)) {
    EXPECT_NE(answer, -EBADF) << name;
    EXPECT_TRUE(answer.has_value()) << name << " was never answered";
  }
  EXPECT_EQ(fs_->counts().open_handles, 0u) << "RELEASE and RELEASEDIR came last";
  ExpectEveryOperationEbadf(node, file, dir);
}

// A FIFO opened without a peer blocks in open(2): a handler that did it would never answer.
// `unblock` opens the peer when the answer is late, so that the test ends either way.
std::optional<int32_t> AnswerWithin(const std::function<void()>& request,
                                    const std::function<std::optional<int32_t>()>& answer,
                                    const std::function<void()>& unblock) {
  std::thread call(request);
  for (int tries = 0; tries < 500 && !answer(); ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::optional<int32_t> in_time = answer();
  if (!in_time) unblock();
  call.join();
  return in_time;
}

TEST_F(ForgedHandles, OpenOfAFifoOrASocketIsEnxioAtOnce) {
  const std::string fifo = source_.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0) << std::strerror(errno);
  const std::string socket_path = source_.path() + "/socket";
  const base::UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(socket_path.size(), sizeof(address.sun_path));
  std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const auto [file_node, file] = CreateFile("file");

  for (const std::string name : {"fifo", "socket", "file"}) {
    const uint64_t node = name == "file" ? file_node : LookupNode(name);
    for (const uint32_t flags : {O_RDONLY, O_WRONLY, O_RDWR}) {
      ++unique_;
      const RequestContext context = Context(node);
      op::Open open{};
      open.in.flags = flags;
      const std::optional<int32_t> answer = AnswerWithin(
          [&] { fs_->Open(context, open, OpenReply(Token())); }, [&] { return Answer(); },
          [&] { base::UniqueFd peer(::open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC)); });
      // The negative control: the regular file opens.
      EXPECT_EQ(answer, name == "file" ? 0 : -ENXIO) << name << " flags " << flags;
    }
  }
}

}  // namespace
}  // namespace ringfuse::daemon
