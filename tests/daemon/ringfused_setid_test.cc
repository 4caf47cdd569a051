// Set-ID bits through the real ringfused, as an administrator runs it for every user of the
// machine: files made in SOURCE behind its back, changed by their owner or a member of their
// group, the mode read at once as `stat -c %a` reads it (setid_changes.h), each compared with
// the same change natively. The kernel caches attributes for the daemon's default second.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/daemon/ringfused_fixture.h"
#include "tests/daemon/setid_changes.h"
#include "tests/transport/kernel_fixture.h"

namespace ringfuse::daemon {
namespace {

class RingfusedSetId : public RingfusedBinary {
 protected:
  // Serves a fresh SOURCE with `options`, makes the scenario there and in a plain directory
  // beside it, and stops the daemon.
  void CompareWithNative(const std::string& name, const std::string& options) {
    SCOPED_TRACE(options);
    const std::string native = dir_.path() + "/native-" + name;
    const std::string source = dir_.path() + "/source-" + name;
    ASSERT_EQ(::mkdir(native.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(source.c_str(), 0755), 0);
    const std::string log = dir_.path() + "/stderr-" + name;
    ASSERT_NO_FATAL_FAILURE(StartInForeground({"-f", "-o", options, source, mountpoint_}, log));

    const std::vector<std::string> expected = setid::SeenAtOnce(native, native);
    EXPECT_THAT(expected, ::testing::IsSupersetOf(setid::kSeenAtOnceRules));
    EXPECT_THAT(setid::Differences(expected, setid::SeenAtOnce(source, mountpoint_)),
                ::testing::IsEmpty());
    EXPECT_THAT(setid::Differences(setid::ModesMadeIn(native), setid::ModesMadeIn(source)),
                ::testing::IsEmpty())
        << "the backing files";

    ASSERT_EQ(::kill(daemon_pid_, SIGTERM), 0);
    const int status = WaitBounded(daemon_pid_, std::chrono::seconds(10));
    daemon_pid_ = -1;
    EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(log);
    EXPECT_TRUE(WaitUntilUnmounted(std::chrono::seconds(5)));
  }
};

// With the kernel checking permissions, with kernel passthrough, and with the daemon checking.
TEST_F(RingfusedSetId, ModesReadAtOnceAfterChangesAreTheNativeOnes) {
  RINGFUSE_SKIP_UNLESS_KERNEL();
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
  CompareWithNative("kernel-checks", "allow_other,default_permissions");
  CompareWithNative("passthrough", "allow_other,default_permissions,passthrough");
  CompareWithNative("daemon-checks", "allow_other");
}

}  // namespace
}  // namespace ringfuse::daemon
