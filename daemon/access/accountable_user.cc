#include "daemon/access/accountable_user.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <optional>
#include <string>

#include "base/fd.h"
#include "daemon/access/credentials.h"

namespace ringfuse::daemon {
namespace {

using base::UniqueFd;

// A user namespace, by the identity of its nsfs inode.
struct Namespace {
  dev_t device;
  ino_t inode;
  bool operator==(const Namespace&) const = default;
};

std::optional<Namespace> NamespaceOf(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  return Namespace{st.st_dev, st.st_ino};
}

const std::optional<Namespace>& DaemonNamespace() {
  static const std::optional<Namespace> own = [] {
    const base::UniqueFd fd(::open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC));
    return fd.valid() ? NamespaceOf(fd.get()) : std::nullopt;
  }();
  return own;
}

// User namespaces nest at most 32 deep (kernel/user_namespace.c); a walk longer than that
// is no walk up to the daemon's.
constexpr int kMaxNamespaceDepth = 33;

// Walks up from the caller's namespace `current` to the one right below the daemon's and returns
// its owner. NS_GET_PARENT fails (EPERM) above the daemon's own: a caller whose chain never
// meets the daemon's namespace is unplaced.
Account OwnerBelow(base::UniqueFd current, const Namespace& daemon) {
  for (int depth = 0; depth < kMaxNamespaceDepth; ++depth) {
    base::UniqueFd parent(::ioctl(current.get(), NS_GET_PARENT));
    if (!parent.valid()) return kUnplacedCallers;
    const std::optional<Namespace> above = NamespaceOf(parent.get());
    if (!above) return kUnplacedCallers;
    if (*above == daemon) {
      uid_t owner;
      return ::ioctl(current.get(), NS_GET_OWNER_UID, &owner) == 0 ? Account{owner}
                                                                   : kUnplacedCallers;
    }
    current = std::move(parent);
  }
  return kUnplacedCallers;
}

}  // namespace

Account AccountOf(const RequestContext& context) {
  const std::optional<Namespace>& daemon = DaemonNamespace();
  if (context.pid() == 0 || !daemon || !ProcNamesRequestPids()) return kUnplacedCallers;
  const std::string path = "/proc/" + std::to_string(context.pid()) + "/ns/user";
  base::UniqueFd caller(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!caller.valid()) return kUnplacedCallers;
  const std::optional<Namespace> own = NamespaceOf(caller.get());
  if (!own) return kUnplacedCallers;
  if (*own == *daemon) return Account{context.uid()};
  return OwnerBelow(std::move(caller), *daemon);
}

}  // namespace ringfuse::daemon
