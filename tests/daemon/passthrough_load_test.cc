// The passthrough daemon under load, over every transport: many clients mixing metadata and data
// operations at once, then every byte checked; and a burst of opens that the kernel then forgets,
// after which the daemon holds what it held before.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "tests/daemon/passthrough_fixture.h"
#include "tests/daemon/test_files.h"
#include "tests/open_fds.h"

namespace ringfuse::daemon {
namespace {

using Clock = std::chrono::steady_clock;
using ringfuse::testing::ReadFile;
using ringfuse::testing::WriteFile;

using PassthroughLoad = MountedPassthroughTest;

// What one client did: the files it left and their contents, and every call that failed.
struct ClientRecord {
  std::map<std::string, std::string> files;  // relative path -> contents
  std::vector<std::string> failures;
};

// One client working in its own directory until `deadline`: create, write, fsync, read back,
// stat, list, rename, link, symlink and readlink, remove; it also stats other clients' names.
class LoadClient {
 public:
  LoadClient(std::string root, int id, Clock::time_point deadline)
      : root_(std::move(root)), id_(id), deadline_(deadline) {}

  ClientRecord Run() {
    const std::string dir = absl::StrFormat("c%d", id_);
    Check(::mkdir(Path(dir).c_str(), 0755), "mkdir " + dir);
    for (int round = 0; Clock::now() < deadline_; ++round) OneRound(dir, round);
    return std::move(record_);
  }

 private:
  void OneRound(const std::string& dir, int round) {
    const std::string name = absl::StrFormat("%s/f%d", dir, round);
    const std::string contents = absl::StrFormat("client %d round %d %s", id_, round,
                                                 std::string(static_cast<size_t>(round % 97), 'x'));
    WriteAndSync(name, contents, round % 4 == 0);
    if (ReadFile(Path(name)) != contents) Fail("read back " + name);
    struct stat st {};
    Check(::stat(Path(name).c_str(), &st), "stat " + name);
    if (st.st_size != static_cast<off_t>(contents.size())) Fail("size of " + name);
    // Another client's directory: its names come and go, so only the call must not misbehave.
    ::stat(Path(absl::StrFormat("c%d/f%d", (id_ + 1) % 64, round)).c_str(), &st);
    switch (round % 5) {
      case 0: Rename(name, name + ".renamed", contents); break;
      case 1: Remove(name); break;
      case 2: Link(name, name + ".link", contents); break;
      case 3: Symlink(dir, round); break;
      default: record_.files[name] = contents; break;
    }
    if (round % 10 == 0) List(dir);
  }

  void WriteAndSync(const std::string& name, const std::string& contents, bool sync) {
    const int fd = ::open(Path(name).c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return Fail("create " + name);
    if (::write(fd, contents.data(), contents.size()) != static_cast<ssize_t>(contents.size())) {
      Fail("write " + name);
    }
    if (sync) Check(::fsync(fd), "fsync " + name);
    Check(::close(fd), "close " + name);
  }

  void Rename(const std::string& from, const std::string& to, const std::string& contents) {
    if (Check(::rename(Path(from).c_str(), Path(to).c_str()), "rename " + from)) {
      record_.files[to] = contents;
    }
  }
  void Remove(const std::string& name) { Check(::unlink(Path(name).c_str()), "unlink " + name); }
  void Link(const std::string& from, const std::string& to, const std::string& contents) {
    if (Check(::link(Path(from).c_str(), Path(to).c_str()), "link " + from)) {
      record_.files[from] = contents;
      record_.files[to] = contents;
    }
  }
  void Symlink(const std::string& dir, int round) {
    const std::string name = absl::StrFormat("%s/s%d", dir, round);
    const std::string target = absl::StrFormat("f%d", round);
    if (!Check(::symlink(target.c_str(), Path(name).c_str()), "symlink " + name)) return;
    char read[64];
    const ssize_t length = ::readlink(Path(name).c_str(), read, sizeof(read));
    if (std::string(read, length > 0 ? static_cast<size_t>(length) : 0) != target) {
      Fail("readlink " + name);
    }
    Remove(name);
    Remove(absl::StrFormat("%s/f%d", dir, round));
  }
  void List(const std::string& dir) {
    DIR* listing = ::opendir(Path(dir).c_str());
    if (listing == nullptr) return Fail("opendir " + dir);
    while (::readdir(listing) != nullptr) {
    }
    ::closedir(listing);
  }

  bool Check(int result, const std::string& what) {
    if (result == 0) return true;
    Fail(what);
    return false;
  }
  void Fail(const std::string& what) {
    record_.failures.push_back(absl::StrFormat("%s: %s", what, std::strerror(errno)));
  }
  std::string Path(const std::string& relative) const { return root_ + "/" + relative; }

  const std::string root_;
  const int id_;
  const Clock::time_point deadline_;
  ClientRecord record_;
};

// Every file a client left, under the mount and in SOURCE, holds exactly what it wrote, and its
// directory holds nothing else.
void ExpectTreeMatches(const std::string& root, int id, const ClientRecord& record) {
  const std::string dir = absl::StrFormat("%s/c%d", root, id);
  size_t entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++entries;
    const std::string relative = absl::StrFormat("c%d/%s", id, entry.path().filename().string());
    EXPECT_TRUE(record.files.contains(relative)) << root << ": unexpected " << relative;
  }
  EXPECT_EQ(entries, record.files.size()) << dir;
  for (const auto& [name, contents] : record.files) {
    EXPECT_EQ(ReadFile(root + "/" + name), contents) << root << "/" << name;
  }
}

TEST_P(PassthroughLoad, SixtyFourClientsMixingOperationsLoseNothing) {
  constexpr int kClients = 64;
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(3);
  std::vector<ClientRecord> records(kClients);
  std::vector<std::thread> clients;
  for (int id = 0; id < kClients; ++id) {
    clients.emplace_back([&, id] { records[id] = LoadClient(Mounted(""), id, deadline).Run(); });
  }
  for (std::thread& client : clients) client.join();
  size_t files = 0;
  for (int id = 0; id < kClients; ++id) {
    EXPECT_TRUE(records[id].failures.empty())
        << "client " << id << ": " << records[id].failures.size() << " failures, first "
        << records[id].failures.front();
    files += records[id].files.size();
    ExpectTreeMatches(Mounted(""), id, records[id]);
    ExpectTreeMatches(source_, id, records[id]);
  }
  EXPECT_GT(files, size_t{kClients}) << "the clients did almost nothing";
}

// After 10,000 files were opened and closed through the mount and the kernel forgot them, the
// daemon holds no more nodes and fds than before: nothing leaks per file.
TEST_P(PassthroughLoad, ForgottenFilesLeaveNoNodesOrFdsBehind) {
  constexpr int kFiles = 10000;
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_EQ(::close(::open(Source(std::to_string(i)).c_str(), O_CREAT | O_WRONLY, 0644)), 0);
  }
  const size_t nodes_before = fs_->inodes().size();
  const size_t fds_before = ringfuse::testing::OpenFdCount();
  for (int i = 0; i < kFiles; ++i) {
    const int fd = ::open(Mounted(std::to_string(i)).c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0) << i << ": " << std::strerror(errno);
    ASSERT_EQ(::write(fd, "x", 1), 1);
    ASSERT_EQ(::close(fd), 0);
  }
  EXPECT_GE(fs_->inodes().size(), nodes_before + kFiles) << "the kernel forgot them already";
  // Dentries and inodes nobody uses go, and with them a FORGET for each node.
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (fs_->inodes().size() > nodes_before || fs_->counts().open_handles > 0) {
    WriteFile("/proc/sys/vm/drop_caches", "2");
    if (Clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(fs_->inodes().size(), nodes_before);
  EXPECT_EQ(fs_->counts().open_handles, 0u);
  EXPECT_LE(ringfuse::testing::OpenFdCount(), fds_before);
}

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughLoad, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
