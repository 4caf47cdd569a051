// The filesystem operations users make, through a real mount, over each transport, against the
// in-memory filesystem; data is checked byte for byte.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "examples/memfs/memfs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::testing {
namespace {

using examples::MemFs;

class EndToEnd : public TransportTest {
 protected:
  void SetUp() override {
    TransportTest::SetUp();
    if (IsSkipped()) return;
    SessionOptions options;  // MemFs serves READDIRPLUS, which a session asks for only if told
    options.init.flags |= wire::init_flag::kDoReaddirplus | wire::init_flag::kReaddirplusAuto;
    absl::StatusOr<std::unique_ptr<ServedMount>> mount =
        ServedMount::Start(fs_, GetParam(), options);
    ASSERT_TRUE(mount.ok()) << mount.status();
    mount_ = std::move(*mount);
    ASSERT_EQ(mount_->session().transport_kind(), GetParam());
  }

  std::string Path(const std::string& relative) const { return mount_->Path(relative); }

  static std::string ReadWhole(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return "<open failed>";
    std::string data;
    char buffer[65536];
    ssize_t n;
    while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) data.append(buffer, n);
    ::close(fd);
    return data;
  }

  MemFs fs_;
  std::unique_ptr<ServedMount> mount_;
};

TEST_P(EndToEnd, LookupAndGetattrSeeWhatTheServerHas) {
  fs_.AddFile(wire::kRootId, "hello", "hello, world\n", 0640);
  struct stat st;
  ASSERT_EQ(::stat(Path("hello").c_str(), &st), 0) << std::strerror(errno);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_size, 13);
  EXPECT_EQ(::stat(Path("missing").c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
}

TEST_P(EndToEnd, WrittenDataReadsBackByteForByte) {
  std::mt19937 random(42);
  std::string data(3 * 1024 * 1024 + 123, '\0');
  for (char& c : data) c = static_cast<char>(random());
  const int fd = ::open(Path("data").c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  size_t written = 0;
  while (written < data.size()) {
    const ssize_t n =
        ::write(fd, data.data() + written, std::min<size_t>(data.size() - written, 200000));
    ASSERT_GT(n, 0) << std::strerror(errno);
    written += n;
  }
  ASSERT_EQ(::close(fd), 0);
  EXPECT_EQ(ReadWhole(Path("data")), data);
  EXPECT_EQ(fs_.Contents(fs_.FindChild(wire::kRootId, "data")), data);
}

TEST_P(EndToEnd, SetattrChangesModeSizeAndTimes) {
  fs_.AddFile(wire::kRootId, "f", "0123456789");
  ASSERT_EQ(::chmod(Path("f").c_str(), 0604), 0);
  ASSERT_EQ(::truncate(Path("f").c_str(), 4), 0);
  const timeval times[2] = {{1000, 0}, {2000, 0}};
  ASSERT_EQ(::utimes(Path("f").c_str(), times), 0);
  struct stat st;
  ASSERT_EQ(::stat(Path("f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0604u);
  EXPECT_EQ(st.st_size, 4);
  EXPECT_EQ(st.st_atime, 1000);
  EXPECT_EQ(st.st_mtime, 2000);
  EXPECT_EQ(ReadWhole(Path("f")), "0123");
}

// Creates 300 files in dir/ through the mount, lists dir/, and checks the listing is exact.
void CreateAndListEveryEntry(const std::string& dir_path) {
  ASSERT_EQ(::mkdir(dir_path.c_str(), 0755), 0) << std::strerror(errno);
  std::set<std::string> expected = {".", ".."};
  for (int i = 0; i < 300; ++i) {
    const std::string name = "entry-with-a-longish-name-" + std::to_string(i);
    const int fd = ::open((dir_path + "/" + name).c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    ::close(fd);
    expected.insert(name);
  }
  DIR* dir = ::opendir(dir_path.c_str());
  ASSERT_NE(dir, nullptr);
  std::multiset<std::string> listed;
  while (dirent* entry = ::readdir(dir)) listed.insert(entry->d_name);
  ::closedir(dir);
  EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()), expected);
  EXPECT_EQ(listed.size(), expected.size()) << "an entry was listed twice";
}

TEST_P(EndToEnd, MkdirCreateAndReaddirplusListEveryEntry) {
  CreateAndListEveryEntry(Path("dir"));
  EXPECT_GT(fs_.RequestCount(Opcode::kReaddirplus), 0u);
}

TEST_P(EndToEnd, UnlinkRmdirAndRenameChangeTheTree) {
  fs_.AddFile(wire::kRootId, "a", "A");
  fs_.AddFile(wire::kRootId, "b", "B");
  fs_.AddDir(wire::kRootId, "d");
  ASSERT_EQ(::rename(Path("a").c_str(), Path("d/moved").c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(ReadWhole(Path("d/moved")), "A");
  ASSERT_EQ(::rename(Path("b").c_str(), Path("d/moved").c_str()), 0);  // replaces
  EXPECT_EQ(ReadWhole(Path("d/moved")), "B");
  EXPECT_EQ(::rmdir(Path("d").c_str()), -1);
  EXPECT_EQ(errno, ENOTEMPTY);
  ASSERT_EQ(::unlink(Path("d/moved").c_str()), 0);
  ASSERT_EQ(::rmdir(Path("d").c_str()), 0);
  struct stat st;
  EXPECT_EQ(::stat(Path("d").c_str(), &st), -1);
  EXPECT_EQ(fs_.FindChild(wire::kRootId, "d"), 0u);
}

TEST_P(EndToEnd, SymlinkAndReadlinkRoundTrip) {
  ASSERT_EQ(::symlink("some/target/path", Path("link").c_str()), 0) << std::strerror(errno);
  char target[256] = {};
  const ssize_t length = ::readlink(Path("link").c_str(), target, sizeof(target));
  ASSERT_GT(length, 0);
  EXPECT_EQ(std::string(target, length), "some/target/path");
  struct stat st;
  ASSERT_EQ(::lstat(Path("link").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

TEST_P(EndToEnd, StatfsReachesTheServer) {
  struct statfs st;
  ASSERT_EQ(::statfs(mount_->root().c_str(), &st), 0) << std::strerror(errno);
  EXPECT_EQ(st.f_type, 0x65735546);  // FUSE_SUPER_MAGIC
  EXPECT_GT(fs_.RequestCount(Opcode::kStatfs), 0u);
}

TEST_P(EndToEnd, ServesManyClientsAtOnce) {
  fs_.AddFile(wire::kRootId, "shared", std::string(8192, 's'));
  std::vector<std::thread> clients;
  std::atomic<int> failures{0};
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        struct stat st;
        if (::stat(Path("shared").c_str(), &st) != 0 || st.st_size != 8192) ++failures;
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(failures.load(), 0);
}

// Reads its arguments after replying, which the handler contract allows until it returns.
class ReadsArgumentsAfterReplying : public MemFs {
 public:
  void Lookup(const RequestContext& context, const op::Lookup& args, EntryReply reply) override {
    MemFs::Lookup(context, args, std::move(reply));
    std::lock_guard lock(mutex_);
    names_.emplace_back(args.name);
  }
  void Write(const RequestContext& context, const op::Write& args, CountReply reply) override {
    MemFs::Write(context, args, std::move(reply));
    std::lock_guard lock(mutex_);
    written_.append(reinterpret_cast<const char*>(args.data.data()), args.data.size());
  }
  std::vector<std::string> names() {
    std::lock_guard lock(mutex_);
    return names_;
  }
  std::string written() {
    std::lock_guard lock(mutex_);
    return written_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> names_;
  std::string written_;
};

class ArgumentsAfterReply : public TransportTest {};

TEST_P(ArgumentsAfterReply, StayIntactUntilTheHandlerReturns) {
  ReadsArgumentsAfterReplying fs;
  absl::StatusOr<std::unique_ptr<ServedMount>> mount = ServedMount::Start(fs, GetParam());
  ASSERT_TRUE(mount.ok()) << mount.status();
  const std::string name(200, 'n');  // longer than the EntryOut a reply would put over it
  const std::string data(300, 'd');
  const int fd = ::open((*mount)->Path(name).c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  ::close(fd);
  struct stat st;
  ::stat((*mount)->Path("missing-" + name).c_str(), &st);
  // On /dev/fuse transports the reply reaches the kernel before the handler has returned.
  const auto recorded = [&] {
    const std::vector<std::string> names = fs.names();
    return std::find(names.begin(), names.end(), "missing-" + name) != names.end();
  };
  for (int i = 0; i < 100 && !recorded(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_THAT(fs.names(), ::testing::Contains("missing-" + name));
  EXPECT_EQ(fs.written(), data);
}

// By default a session does not ask for READDIRPLUS (the kernel would not fall back to READDIR
// for a handler that does not serve it), so the kernel lists with plain READDIR.
class PlainReaddir : public TransportTest {};

TEST_P(PlainReaddir, ListsEveryEntry) {
  MemFs fs;
  absl::StatusOr<std::unique_ptr<ServedMount>> mount = ServedMount::Start(fs, GetParam());
  ASSERT_TRUE(mount.ok()) << mount.status();
  CreateAndListEveryEntry((*mount)->Path("dir"));
  EXPECT_GT(fs.RequestCount(Opcode::kReaddir), 0u);
  EXPECT_EQ(fs.RequestCount(Opcode::kReaddirplus), 0u);
}

INSTANTIATE_TEST_SUITE_P(Transports, EndToEnd, kEveryTransport, TransportTestName);
INSTANTIATE_TEST_SUITE_P(Transports, PlainReaddir, kEveryTransport, TransportTestName);
INSTANTIATE_TEST_SUITE_P(Transports, ArgumentsAfterReply, kEveryTransport, TransportTestName);

}  // namespace
}  // namespace ringfuse::testing
