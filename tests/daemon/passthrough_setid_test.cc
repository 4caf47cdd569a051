// Set-user-ID and set-group-ID bits after another user changes a file: the same changes are made
// natively and through the mount, in each cache configuration, and every resulting mode must
// be the same (the kernel's rules: setid_changes.h). Through the mount, with HANDLE_KILLPRIV_V2,
// the daemon must apply them, for each path a change can take (WRITE, SETATTR, OPEN with O_TRUNC,
// FALLOCATE, COPY_FILE_RANGE, kernel passthrough), and the kernel must learn of it where the
// reply carries no attributes: every mode is read as `stat -c %a` reads it, from the kernel's
// cache where it has one.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "tests/daemon/passthrough_fixture.h"
#include "tests/daemon/setid_changes.h"
#include "tests/daemon/test_users.h"

namespace ringfuse::daemon {
namespace {

using setid::NamedChange;

const NamedChange kChanges[] = {
    {"write", setid::Write},
    {"write O_DIRECT", setid::WriteDirect},
    {"append", setid::Append},
    {"truncate", setid::Truncate},
    {"ftruncate", setid::Ftruncate},
    {"open O_TRUNC", setid::OpenTruncating},
    {"fallocate", setid::Fallocate, false},
    {"copy_file_range", setid::CopyInto, false},
    {"open only", setid::OpenOnly},
};

struct NamedUser {
  const char* name;
  const User* user;
};
const User kRoot{0, 0, {0}};
const User kCarol{1103, 1103, {1103}, kCapabilityFsetid};  // keeps the bits, as root does
const NamedUser kCallers[] = {{"alice (in the group)", &kAlice},
                              {"bob (not in the group)", &kBob},
                              {"root", &kRoot},
                              {"carol (CAP_FSETID)", &kCarol}};

bool Covered(const NamedChange& change, const NamedUser& caller) {
  return change.says_fsetid || caller.user->capabilities == 0;
}

// Everyone may write; with and without group execute, which decides set-group-ID; and neither.
const mode_t kModes[] = {06777, 06767, 0666};

std::string FileName(size_t change, mode_t mode, size_t caller) {
  return absl::StrFormat("f%zu-%o-%zu", change, mode, caller);
}

// Makes every change on a fresh file of its own under `base`; returns, for each, what the
// change returned and the mode the file has after it, as "change, mode, caller: errno mode".
std::vector<std::string> Scenario(const std::string& base) {
  std::vector<std::string> outcomes;
  const std::string source = base + "/source-of-copies";
  if (setid::RootMakes(source, 0, 0, 0644) != 0) return {"root cannot make " + source};
  for (size_t c = 0; c < std::size(kChanges); ++c) {
    for (mode_t mode : kModes) {
      for (size_t u = 0; u < std::size(kCallers); ++u) {
        if (!Covered(kChanges[c], kCallers[u])) continue;
        const std::string path = base + "/" + FileName(c, mode, u);
        if (setid::RootMakes(path, 0, kShared, mode) != 0) return {"root cannot make " + path};
        const int error = As(*kCallers[u].user, [&] { return kChanges[c].change(path, source); });
        outcomes.push_back(
            absl::StrFormat("%s, %o, %s: %s %s", kChanges[c].name, mode, kCallers[u].name,
                            error == 0 ? "ok" : strerrorname_np(error), setid::StatxModeOf(path)));
      }
    }
  }
  return outcomes;
}

// The modes of the files Scenario made under `base`, in its order.
std::vector<std::string> ModesUnder(const std::string& base) {
  std::vector<std::string> modes;
  for (size_t c = 0; c < std::size(kChanges); ++c) {
    for (mode_t mode : kModes) {
      for (size_t u = 0; u < std::size(kCallers); ++u) {
        if (Covered(kChanges[c], kCallers[u])) {
          modes.push_back(setid::StatxModeOf(base + "/" + FileName(c, mode, u)));
        }
      }
    }
  }
  return modes;
}

// The configurations whose paths differ: the page cache (WRITE from the cache, or with
// writeback_cache from the kernel's own flushes), none (every write direct), kernel passthrough.
struct Configuration {
  const char* name;
  DaemonOptions options;
};
std::vector<Configuration> Configurations() {
  std::vector<Configuration> configurations(4);
  configurations[0].name = "cached";
  configurations[1].name = "cache-off";
  configurations[1].options.cache = false;
  configurations[2].name = "writeback-cache";
  configurations[2].options.writeback_cache = true;
  configurations[3].name = "passthrough";
  configurations[3].options.passthrough = true;
  return configurations;
}

// What the native run itself must show, so that both runs cannot be wrong together.
const std::vector<std::string> kRulesAtWork = {
    "write, 6777, alice (in the group): ok 0777",
    "write, 6767, alice (in the group): ok 2767",
    "write, 6767, bob (not in the group): ok 0767",
    "write, 6777, root: ok 6777",
    "open only, 6777, bob (not in the group): ok 6777",
    "write, 6777, carol (CAP_FSETID): ok 6777",
};

using PassthroughSetid = PassthroughMountTest;

// For each configuration: the scenario natively and through a mount served that way; the modes
// seen through the mount, and those of the backing files, must be the native ones.
TEST_P(PassthroughSetid, ChangesByOtherUsersClearTheBitsAsNatively) {
  ASSERT_EQ(::chmod(top_.path().c_str(), 0755), 0);
  for (Configuration& configuration : Configurations()) {
    SCOPED_TRACE(configuration.name);
    const std::string native = top_.path() + "/native-" + configuration.name;
    ASSERT_EQ(::mkdir(native.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(Source(configuration.name).c_str(), 0755), 0);
    configuration.options.mount.allow_other = true;
    ASSERT_NO_FATAL_FAILURE(Mount(configuration.options));
    if (configuration.options.passthrough) {
      ASSERT_TRUE(fs_->CheckPassthroughWorks().ok());
    }

    const std::vector<std::string> expected = Scenario(native);
    EXPECT_THAT(expected, ::testing::IsSupersetOf(kRulesAtWork));
    EXPECT_THAT(setid::Differences(expected, Scenario(Mounted(configuration.name))),
                ::testing::IsEmpty());
    EXPECT_THAT(setid::Differences(ModesUnder(native), ModesUnder(Source(configuration.name))),
                ::testing::IsEmpty())
        << "the backing files";
    Unmount();
  }
}

// Files made in SOURCE behind the daemon's back, changed by their owner or a member of their
// group, the mode read at once as `stat -c %a` reads it (setid_changes.h): what the kernel
// caches must be what the backing filesystem holds, as natively. Attributes are cached for an
// hour here, so that a mode the kernel was not told of shows however slowly the test runs; every
// configuration, cache-off's direct I/O too, then has a cached mode to keep right.
TEST_P(PassthroughSetid, ModesReadAtOnceAfterChangesAreTheNativeOnes) {
  ASSERT_EQ(::chmod(top_.path().c_str(), 0755), 0);
  for (Configuration& configuration : Configurations()) {
    SCOPED_TRACE(configuration.name);
    const std::string native = top_.path() + "/at-once-native-" + configuration.name;
    const std::string served = std::string("at-once-") + configuration.name;
    ASSERT_EQ(::mkdir(native.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(Source(served).c_str(), 0755), 0);
    configuration.options.mount.allow_other = true;
    configuration.options.attr_timeout = configuration.options.entry_timeout = Timeout{3600};
    ASSERT_NO_FATAL_FAILURE(Mount(configuration.options));

    const std::vector<std::string> expected = setid::SeenAtOnce(native, native);
    EXPECT_THAT(expected, ::testing::IsSupersetOf(setid::kSeenAtOnceRules));
    EXPECT_THAT(setid::Differences(expected, setid::SeenAtOnce(Source(served), Mounted(served))),
                ::testing::IsEmpty());
    EXPECT_THAT(setid::Differences(setid::ModesMadeIn(native), setid::ModesMadeIn(Source(served))),
                ::testing::IsEmpty())
        << "the backing files";
    Unmount();
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughSetid, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
