// Whom the daemon charges a caller to: real processes in the daemon's user namespace and in
// namespaces an ordinary user made, as a rootless container's.
#include "daemon/access/accountable_user.h"

#include <unistd.h>

#include "gtest/gtest.h"
#include "tests/daemon/user_namespace.h"

namespace ringfuse::daemon {
namespace {

constexpr uid_t kOwner = 1101;
// A uid the kernel would send for a process in such a namespace: one of its owner's
// subordinate uids.
constexpr uint32_t kSubordinate = 200003;

Account AccountOfCaller(pid_t pid, uint32_t uid) {
  wire::InHeader header{};
  header.pid = static_cast<uint32_t>(pid);
  header.uid = uid;
  const Extensions extensions;
  return AccountOf(RequestContext{header, extensions});
}

// The control: a caller in the daemon's own namespace is its uid, whatever it is.
TEST(AccountOf, ACallerInTheDaemonsNamespaceIsItsUid) {
  EXPECT_EQ(AccountOfCaller(::gettid(), kSubordinate), kSubordinate);
  EXPECT_EQ(AccountOfCaller(::gettid(), 0), 0u);
}

TEST(AccountOf, ACallerInAUsersNamespaceIsThatUser) {
  const UserNamespaceProcess container(kOwner, 1);
  ASSERT_TRUE(container.made()) << "the user could not make a user namespace";
  EXPECT_EQ(AccountOfCaller(container.pid(), kSubordinate), kOwner);
  EXPECT_EQ(AccountOfCaller(container.pid(), 0), kOwner) << "its root too";
}

TEST(AccountOf, NestedNamespacesAreTheTopmostOnesOwner) {
  const UserNamespaceProcess nested(kOwner, 3);
  ASSERT_TRUE(nested.made()) << "the user could not nest user namespaces";
  EXPECT_EQ(AccountOfCaller(nested.pid(), kSubordinate), kOwner);
}

// Callers the daemon cannot place share one account: never their own uid, which a user with
// many would multiply.
TEST(AccountOf, CallersWithoutAPidShareOneAccount) {
  EXPECT_EQ(AccountOfCaller(0, kSubordinate), kUnplacedCallers);
  EXPECT_EQ(AccountOfCaller(0, 0), kUnplacedCallers);
}

}  // namespace
}  // namespace ringfuse::daemon
