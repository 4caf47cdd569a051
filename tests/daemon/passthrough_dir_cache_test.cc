// With caching, the kernel keeps directory listings (FOPEN_CACHE_DIR, FOPEN_KEEP_CACHE): an
// unchanged directory is listed again without asking the daemon; a change through the mount, or
// behind its back (the kernel compares the directory's mtime when a listing starts), shows at the
// next listing. With cache=off every listing asks the daemon.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <set>
#include <string>
#include <utility>

#include "tests/daemon/passthrough_fixture.h"

namespace ringfuse::daemon {
namespace {

// What a listing from the start shows, . and .. aside.
std::set<std::string> Names(const std::string& directory) {
  std::set<std::string> names;
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return {"error: " + std::string(std::strerror(errno))};
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.insert(name);
  }
  ::closedir(dir);
  return names;
}

class DirectoryCache : public PassthroughMountTest {
 protected:
  void SetUp() override {
    PassthroughMountTest::SetUp();
    if (IsSkipped()) return;
    ringfuse::testing::WriteFile(Source("a"), "a");
    ringfuse::testing::WriteFile(Source("b"), "b");
  }

  void MountCaching(bool cache) {
    DaemonOptions options;
    options.cache = cache;
    Mount(options);
  }

  // The listing of the mount's root, and how many READDIR(PLUS) it cost the daemon.
  std::pair<std::set<std::string>, uint64_t> ListRoot() {
    const uint64_t before = fs_->counts().listings;
    std::set<std::string> names = Names(mount_->root());
    return {std::move(names), fs_->counts().listings - before};
  }
};

TEST_P(DirectoryCache, AnUnchangedDirectoryIsListedFromTheKernelsCache) {
  MountCaching(true);
  EXPECT_EQ(ListRoot().first, (std::set<std::string>{"a", "b"}));
  const auto [names, listings] = ListRoot();
  EXPECT_EQ(names, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(listings, 0u) << "the second listing asked the daemon";
}

// The control: without caching the same second listing asks the daemon.
TEST_P(DirectoryCache, WithoutCachingEveryListingAsksTheDaemon) {
  MountCaching(false);
  EXPECT_EQ(ListRoot().first, (std::set<std::string>{"a", "b"}));
  const auto [names, listings] = ListRoot();
  EXPECT_EQ(names, (std::set<std::string>{"a", "b"}));
  EXPECT_GT(listings, 0u);
}

TEST_P(DirectoryCache, AChangeBehindTheMountShowsAtTheNextListing) {
  MountCaching(true);
  ASSERT_EQ(ListRoot().first, (std::set<std::string>{"a", "b"}));
  ringfuse::testing::WriteFile(Source("c"), "c");
  EXPECT_EQ(ListRoot().first, (std::set<std::string>{"a", "b", "c"}));
  ASSERT_EQ(::unlink(Source("a").c_str()), 0);
  EXPECT_EQ(ListRoot().first, (std::set<std::string>{"b", "c"}));
}

TEST_P(DirectoryCache, ChangesThroughTheMountShowAtOnce) {
  MountCaching(true);
  ASSERT_EQ(ListRoot().first, (std::set<std::string>{"a", "b"}));
  ringfuse::testing::WriteFile(Mounted("c"), "c");
  EXPECT_EQ(ListRoot().first, (std::set<std::string>{"a", "b", "c"}));
  ASSERT_EQ(::unlink(Mounted("a").c_str()), 0);
  EXPECT_EQ(ListRoot().first, (std::set<std::string>{"b", "c"}));
  ASSERT_EQ(::rename(Mounted("b").c_str(), Mounted("d").c_str()), 0);
  EXPECT_EQ(ListRoot().first, (std::set<std::string>{"c", "d"}));
  ASSERT_EQ(::mkdir(Mounted("e").c_str(), 0755), 0);
  EXPECT_EQ(ListRoot().first, (std::set<std::string>{"c", "d", "e"}));
}

INSTANTIATE_TEST_SUITE_P(Transports, DirectoryCache, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
