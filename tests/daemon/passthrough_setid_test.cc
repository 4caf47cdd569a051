// Set-user-ID and set-group-ID bits after another user changes a file: the same changes are made
// natively and through the mount, in each cache configuration, and every resulting mode must
// be the same. The kernel's rules (fs/inode.c, fs/attr.c): a change by a caller without
// CAP_FSETID always clears set-user-ID, and clears set-group-ID where the group may execute or
// the caller is not in the file's group. Through the mount, with HANDLE_KILLPRIV_V2, the daemon
// must apply them, for each path a change can take (WRITE, SETATTR, OPEN with O_TRUNC,
// FALLOCATE, COPY_FILE_RANGE, kernel passthrough).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "tests/daemon/passthrough_fixture.h"
#include "tests/daemon/test_users.h"

namespace ringfuse::daemon {
namespace {

constexpr size_t kBlock = 4096;
alignas(kBlock) char block[kBlock];  // static: the children make system calls only

// One change, made by a child as some user on `path`; `source` is a readable file beside it.
using Change = int (*)(const std::string& path, const std::string& source);

int Closing(int fd, int result) {
  const int error = errno;
  ::close(fd);
  errno = error;
  return result;
}

int WriteAt(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), O_WRONLY | flags);
  if (fd < 0) return -1;
  return Closing(fd, ::pwrite(fd, block, kBlock, 0) == kBlock ? 0 : -1);
}

int Write(const std::string& path, const std::string&) { return WriteAt(path, 0); }
int WriteDirect(const std::string& path, const std::string&) { return WriteAt(path, O_DIRECT); }
int Append(const std::string& path, const std::string&) { return WriteAt(path, O_APPEND); }

int Truncate(const std::string& path, const std::string&) { return ::truncate(path.c_str(), 100); }

int Ftruncate(const std::string& path, const std::string&) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) return -1;
  return Closing(fd, ::ftruncate(fd, 100));
}

int OpenTruncating(const std::string& path, const std::string&) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
  return fd < 0 ? -1 : ::close(fd);
}

int Fallocate(const std::string& path, const std::string&) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) return -1;
  return Closing(fd, ::fallocate(fd, 0, 0, 4 * kBlock));
}

int CopyInto(const std::string& path, const std::string& source) {
  const int in = ::open(source.c_str(), O_RDONLY);
  if (in < 0) return -1;
  const int out = ::open(path.c_str(), O_WRONLY);
  if (out < 0) return Closing(in, -1);
  loff_t in_offset = 0, out_offset = 0;
  const ssize_t copied = ::copy_file_range(in, &in_offset, out, &out_offset, kBlock, 0);
  return Closing(in, Closing(out, copied == kBlock ? 0 : -1));
}

// Opening for writing changes nothing: the bits stay until a change is made.
int OpenOnly(const std::string& path, const std::string&) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  return fd < 0 ? -1 : ::close(fd);
}

struct NamedChange {
  const char* name;
  Change change;
  // Whether the request tells the daemon that the caller lacks CAP_FSETID (KILL_SUIDGID):
  // FALLOCATE and COPY_FILE_RANGE do not, and the daemon takes every non-root caller to lack it.
  bool says_fsetid = true;
};
const NamedChange kChanges[] = {
    {"write", Write},
    {"write O_DIRECT", WriteDirect},
    {"append", Append},
    {"truncate", Truncate},
    {"ftruncate", Ftruncate},
    {"open O_TRUNC", OpenTruncating},
    {"fallocate", Fallocate, false},
    {"copy_file_range", CopyInto, false},
    {"open only", OpenOnly},
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

int RootMakes(const std::string& path, mode_t mode) {
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
  if (fd < 0) return -1;
  const bool filled =
      ::pwrite(fd, block, kBlock, 0) == kBlock && ::pwrite(fd, block, kBlock, kBlock) == kBlock;
  return Closing(fd, filled && ::fchown(fd, 0, kShared) == 0 && ::fchmod(fd, mode) == 0 ? 0 : -1);
}

std::string ModeOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return strerrorname_np(errno);
  return absl::StrFormat("%04o", st.st_mode & 07777);
}

std::string FileName(size_t change, mode_t mode, size_t caller) {
  return absl::StrFormat("f%zu-%o-%zu", change, mode, caller);
}

// Makes every change on a fresh file of its own under `base`; returns, for each, what the
// change returned and the mode the file has after it, as "change, mode, caller: errno mode".
std::vector<std::string> Scenario(const std::string& base) {
  std::vector<std::string> outcomes;
  const std::string source = base + "/source-of-copies";
  if (RootMakes(source, 0644) != 0) return {"root cannot make " + source};
  for (size_t c = 0; c < std::size(kChanges); ++c) {
    for (mode_t mode : kModes) {
      for (size_t u = 0; u < std::size(kCallers); ++u) {
        if (!Covered(kChanges[c], kCallers[u])) continue;
        const std::string path = base + "/" + FileName(c, mode, u);
        if (RootMakes(path, mode) != 0) return {"root cannot make " + path};
        const int error = As(*kCallers[u].user, [&] { return kChanges[c].change(path, source); });
        outcomes.push_back(
            absl::StrFormat("%s, %o, %s: %s %s", kChanges[c].name, mode, kCallers[u].name,
                            error == 0 ? "ok" : strerrorname_np(error), ModeOf(path)));
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
          modes.push_back(ModeOf(base + "/" + FileName(c, mode, u)));
        }
      }
    }
  }
  return modes;
}

// "native | through the mount" for each outcome that differs; empty when all are the same.
std::vector<std::string> Differences(const std::vector<std::string>& native,
                                     const std::vector<std::string>& mounted) {
  std::vector<std::string> differences;
  for (size_t i = 0; i < std::max(native.size(), mounted.size()); ++i) {
    const std::string left = i < native.size() ? native[i] : "(none)";
    const std::string right = i < mounted.size() ? mounted[i] : "(none)";
    if (left != right) differences.push_back(left + " | " + right);
  }
  return differences;
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
    configuration.options.allow_other = true;
    ASSERT_NO_FATAL_FAILURE(Mount(configuration.options));
    if (configuration.options.passthrough) {
      ASSERT_TRUE(fs_->CheckPassthroughWorks().ok());
    }

    const std::vector<std::string> expected = Scenario(native);
    EXPECT_THAT(expected, ::testing::IsSupersetOf(kRulesAtWork));
    EXPECT_THAT(Differences(expected, Scenario(Mounted(configuration.name))), ::testing::IsEmpty());
    EXPECT_THAT(Differences(ModesUnder(native), ModesUnder(Source(configuration.name))),
                ::testing::IsEmpty())
        << "the backing files";
    Unmount();
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, PassthroughSetid, ringfuse::testing::kEveryTransport,
                         ringfuse::testing::TransportTestName);

}  // namespace
}  // namespace ringfuse::daemon
