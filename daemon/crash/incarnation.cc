#include "daemon/crash/incarnation.h"

#include "absl/strings/str_format.h"

namespace ringfuse::daemon {
namespace {

constexpr int kIncarnationShift = 40;

}  // namespace

absl::Status ContinueAfterCrash(PassthroughFs& fs, uint32_t incarnation) {
  if (incarnation >= (uint32_t{1} << (64 - kIncarnationShift))) {
    return absl::OutOfRangeError(absl::StrFormat(
        "incarnation %u: ringfused has no node ids left that no earlier one gave out; unmount "
        "and mount again",
        incarnation));
  }
  const uint64_t first = uint64_t{incarnation} << kIncarnationShift;
  const PassthroughFs::Parts parts = fs.parts();
  parts.inodes.GiveNodeIdsFrom(first);
  parts.open.ContinueAfterCrash(first);
  return absl::OkStatus();
}

}  // namespace ringfuse::daemon
