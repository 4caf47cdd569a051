// CPU sets as the kernel lists them in /sys/devices/system/cpu/{possible,online}.
#pragma once

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ringfuse::internal {

// "0-3,5,7-8" -> {0,1,2,3,5,7,8}.
absl::StatusOr<std::vector<int>> ParseCpuList(std::string_view text);

// The CPUs the kernel may ever run a task on, offline ones included: FUSE-over-io_uring needs a
// queue for each of them before it sends anything over the rings.
absl::StatusOr<std::vector<int>> PossibleCpus();

// The CPUs online now.
absl::StatusOr<std::vector<int>> OnlineCpus();

// Pins the calling thread to `cpu`; fails for an offline CPU.
absl::Status PinCurrentThread(int cpu);

}  // namespace ringfuse::internal
