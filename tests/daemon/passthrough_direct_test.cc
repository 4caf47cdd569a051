// A client's O_DIRECT reaches the backing file: the daemon reads and writes SOURCE past its page
// cache too, which the backing file's resident pages show (mincore), and transfers that O_DIRECT
// cannot take (unaligned offsets, lengths or memory) are still served, correctly.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "tests/daemon/passthrough_fixture.h"

namespace ringfuse::daemon {
namespace {

using ringfuse::testing::ReadFile;
using ringfuse::testing::WriteFile;

constexpr size_t kFileSize = 1 << 20;
constexpr size_t kPage = 4096;
constexpr off_t kOffset = 256 << 10;  // the range every test transfers
constexpr size_t kLength = 64 << 10;

struct FreeDeleter {
  void operator()(char* memory) const { std::free(memory); }
};
using AlignedBuffer = std::unique_ptr<char, FreeDeleter>;

AlignedBuffer Aligned(size_t size) {
  return AlignedBuffer(
      static_cast<char*>(std::aligned_alloc(kPage, (size + kPage - 1) / kPage * kPage)));
}

class PassthroughDirect : public PassthroughMountTest {
 protected:
  void SetUp() override {
    PassthroughMountTest::SetUp();
    if (IsSkipped()) return;
    std::mt19937 random(11);
    contents_.resize(kFileSize);
    for (char& c : contents_) c = static_cast<char>(random());
    WriteFile(Source("file"), contents_);
    DropCachedPages();
    ASSERT_EQ(CachedPagesOfTheRange(), 0u) << "the backing file's pages did not leave the cache";
  }

  // Writes SOURCE's dirty pages and takes every page of it out of the page cache.
  void DropCachedPages() const {
    const base::UniqueFd fd(::open(Source("file").c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd.valid());
    ASSERT_EQ(::fsync(fd.get()), 0);
    ASSERT_EQ(::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED), 0);
  }

  // How many of the transferred range's pages of SOURCE's file are in the page cache.
  size_t CachedPagesOfTheRange() const {
    const base::UniqueFd fd(::open(Source("file").c_str(), O_RDONLY | O_CLOEXEC));
    void* map = ::mmap(nullptr, kFileSize, PROT_READ, MAP_SHARED, fd.get(), 0);
    if (map == MAP_FAILED) return kFileSize;
    unsigned char resident[kFileSize / kPage];
    const bool known = ::mincore(map, kFileSize, resident) == 0;
    ::munmap(map, kFileSize);
    if (!known) return kFileSize;
    size_t cached = 0;
    for (size_t page = kOffset / kPage; page < (kOffset + kLength) / kPage; ++page) {
      cached += resident[page] & 1;
    }
    return cached;
  }

  // Reads the range through the mount, opened with `flags`.
  std::string ReadTheRange(int flags) const {
    const base::UniqueFd fd(::open(Mounted("file").c_str(), O_RDONLY | O_CLOEXEC | flags));
    EXPECT_TRUE(fd.valid()) << std::strerror(errno);
    AlignedBuffer buffer = Aligned(kLength);
    const ssize_t got = ::pread(fd.get(), buffer.get(), kLength, kOffset);
    EXPECT_EQ(got, static_cast<ssize_t>(kLength)) << std::strerror(errno);
    return std::string(buffer.get(), got < 0 ? 0 : static_cast<size_t>(got));
  }

  // Writes `data` over the range through the mount, opened with `flags`.
  void WriteTheRange(int flags, const std::string& data) const {
    const base::UniqueFd fd(::open(Mounted("file").c_str(), O_WRONLY | O_CLOEXEC | flags));
    ASSERT_TRUE(fd.valid()) << std::strerror(errno);
    AlignedBuffer buffer = Aligned(kLength);
    data.copy(buffer.get(), kLength);
    ASSERT_EQ(::pwrite(fd.get(), buffer.get(), kLength, kOffset), static_cast<ssize_t>(kLength))
        << std::strerror(errno);
  }

  std::string Expected() const { return contents_.substr(kOffset, kLength); }

  std::string contents_;
};

TEST_P(PassthroughDirect, ADirectReadLeavesTheBackingFileUncached) {
  Mount();
  EXPECT_TRUE(ReadTheRange(O_DIRECT) == Expected());
  EXPECT_EQ(CachedPagesOfTheRange(), 0u);
}

// The control: the same read without O_DIRECT fills the backing file's cache, so the check
// above sees what the daemon's read did.
TEST_P(PassthroughDirect, ABufferedReadFillsTheBackingFilesCache) {
  Mount();
  EXPECT_TRUE(ReadTheRange(0) == Expected());
  EXPECT_EQ(CachedPagesOfTheRange(), kLength / kPage);
}

TEST_P(PassthroughDirect, ADirectWriteReachesTheBackingFileUncached) {
  Mount();
  const std::string data(kLength, 'd');
  WriteTheRange(O_DIRECT, data);
  EXPECT_EQ(CachedPagesOfTheRange(), 0u);
  EXPECT_TRUE(ReadFile(Source("file")).substr(kOffset, kLength) == data);
}

// The control for writes. Without caching, so that the client's write reaches the daemon at
// once instead of the mount's own page cache.
TEST_P(PassthroughDirect, ABufferedWriteFillsTheBackingFilesCache) {
  DaemonOptions uncached;
  uncached.cache = false;
  Mount(uncached);
  WriteTheRange(0, std::string(kLength, 'b'));
  EXPECT_EQ(CachedPagesOfTheRange(), kLength / kPage);
}

// FUSE passes O_DIRECT transfers on however they are aligned, and the kernel's own writeback
// ends a file with a partial block: these go to the buffered fd, and must be right.
TEST_P(PassthroughDirect, UnalignedDirectTransfersAreServed) {
  DaemonOptions writeback;
  writeback.writeback_cache = true;
  Mount(writeback);
  const base::UniqueFd fd(::open(Mounted("file").c_str(), O_RDWR | O_DIRECT | O_CLOEXEC));
  ASSERT_TRUE(fd.valid()) << std::strerror(errno);
  char small[100];
  ASSERT_EQ(::pread(fd.get(), small, sizeof(small), 7), 100) << std::strerror(errno);
  EXPECT_EQ(std::string(small, sizeof(small)), contents_.substr(7, sizeof(small)));
  ASSERT_EQ(::pwrite(fd.get(), "unaligned", 9, kFileSize + 3), 9) << std::strerror(errno);
  AlignedBuffer buffer = Aligned(kPage + 1);
  std::memset(buffer.get(), 'm', kPage + 1);
  ASSERT_EQ(::pwrite(fd.get(), buffer.get() + 1, kPage, 0), static_cast<ssize_t>(kPage))
      << "from client memory that is not aligned (FUSE copies it): " << std::strerror(errno);
  const std::string source = ReadFile(Source("file"));
  ASSERT_EQ(source.size(), kFileSize + 12);
  EXPECT_EQ(source.substr(kFileSize + 3), "unaligned");
  EXPECT_EQ(source.substr(0, kPage), std::string(kPage, 'm'));
  EXPECT_TRUE(source.substr(kPage, kFileSize - kPage) == contents_.substr(kPage));
}

// tmpfs takes O_DIRECT but says nothing of its alignment (no STATX_DIOALIGN), as network
// filesystems and FUSE do: an O_DIRECT open there is served through the buffered fd, as natively,
// and an O_TRUNC in it truncates once, as asked.
class PassthroughDirectOnTmpfs : public PassthroughMountTest {
 protected:
  PassthroughDirectOnTmpfs() : PassthroughMountTest("/dev/shm") {}
};

TEST_P(PassthroughDirectOnTmpfs, OpensWithODirectAsNatively) {
  WriteFile(Source("file"), "kept");
  WriteFile(Source("truncated"), "gone");
  Mount();
  const base::UniqueFd kept(::open(Mounted("file").c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
  ASSERT_TRUE(kept.valid()) << std::strerror(errno);
  char read[4];
  EXPECT_EQ(::pread(kept.get(), read, sizeof(read), 0), 4);
  EXPECT_EQ(std::string(read, sizeof(read)), "kept");
  const base::UniqueFd truncated(
      ::open(Mounted("truncated").c_str(), O_RDWR | O_TRUNC | O_DIRECT | O_CLOEXEC));
  ASSERT_TRUE(truncated.valid()) << std::strerror(errno);
  AlignedBuffer buffer = Aligned(kPage);
  std::memset(buffer.get(), 'n', kPage);
  ASSERT_EQ(::pwrite(truncated.get(), buffer.get(), kPage, 0), static_cast<ssize_t>(kPage));
  EXPECT_EQ(ReadFile(Source("truncated")), std::string(kPage, 'n'));
}

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughDirectOnTmpfs, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughDirect, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
