// Large listings through the daemon, read in many READDIR(PLUS) requests: a listing resumes
// where the last reply stopped without losing or repeating an entry, and telldir(3), seekdir(3)
// and rewinddir(3) of the client reach the backing directory's own cookies. Without caching, so
// that every offset the client asks for reaches the daemon.
#include <dirent.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/daemon/passthrough_fixture.h"

namespace ringfuse::daemon {
namespace {

constexpr int kFiles = 3000;  // some 7 requests: glibc reads 32 KiB of entries at a time

using Listing = std::vector<std::pair<long, std::string>>;  // telldir before each, and the name

// The rest of `dir`'s listing, each entry with the cookie telldir gave before it.
Listing ListRest(DIR* dir) {
  Listing listing;
  for (;;) {
    const long position = ::telldir(dir);
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) return listing;
    listing.emplace_back(position, entry->d_name);
  }
}

class PassthroughListing : public PassthroughMountTest {
 protected:
  void SetUp() override {
    PassthroughMountTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_EQ(::mkdir(Source("big").c_str(), 0755), 0);
    for (int i = 0; i < kFiles; ++i) {
      ringfuse::testing::WriteFile(Source("big/entry-with-a-longer-name-" + std::to_string(i)), "");
    }
    DaemonOptions options;
    options.cache = false;
    Mount(options);
    dir_ = ::opendir(Mounted("big").c_str());
    ASSERT_NE(dir_, nullptr) << std::strerror(errno);
  }
  void TearDown() override {
    if (dir_ != nullptr) ::closedir(dir_);
    PassthroughMountTest::TearDown();
  }

  DIR* dir_ = nullptr;
};

TEST_P(PassthroughListing, EveryEntryIsListedOnce) {
  const Listing listing = ListRest(dir_);
  std::set<std::string> names;
  for (const auto& [position, name] : listing) names.insert(name);
  EXPECT_EQ(names.size(), static_cast<size_t>(kFiles + 2));
  EXPECT_EQ(listing.size(), names.size()) << "an entry was listed twice";
  EXPECT_GE(fs_->counts().listings, 4u) << "the listing did not take many requests";
}

TEST_P(PassthroughListing, SeekdirToATelldirCookieListsTheRestAgain) {
  const Listing listing = ListRest(dir_);
  ASSERT_EQ(listing.size(), static_cast<size_t>(kFiles + 2));
  for (const size_t from : {size_t{1}, size_t{777}, size_t{2500}, listing.size() - 1}) {
    ::seekdir(dir_, listing[from].first);
    const Listing rest = ListRest(dir_);
    EXPECT_TRUE(rest == Listing(listing.begin() + static_cast<long>(from), listing.end()))
        << "from entry " << from << ": " << rest.size() << " entries";
  }
  ::rewinddir(dir_);
  EXPECT_TRUE(ListRest(dir_) == listing) << "after rewinddir";
}

// Two listings of one directory through two opens, in turns: each handle keeps its own place.
TEST_P(PassthroughListing, TwoOpensListInTurnsWithoutDisturbingEachOther) {
  DIR* other = ::opendir(Mounted("big").c_str());
  ASSERT_NE(other, nullptr) << std::strerror(errno);
  std::multiset<std::string> first, second;
  for (;;) {
    const dirent* a = ::readdir(dir_);
    if (a != nullptr) first.insert(a->d_name);
    const dirent* b = ::readdir(other);
    if (b != nullptr) second.insert(b->d_name);
    if (a == nullptr && b == nullptr) break;
  }
  ::closedir(other);
  EXPECT_EQ(first.size(), static_cast<size_t>(kFiles + 2));
  EXPECT_TRUE(first == second);
}

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughListing, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
