// What a child's wait status says, for the messages of everything that starts one (fusermount3,
// the daemons a benchmark runs).
#pragma once

#include <optional>
#include <string>

namespace ringfuse::base {

// True for a child that exited with status 0; false for any other end, or none known.
bool ExitedCleanly(std::optional<int> wait_status);

// How the child ended, as a phrase to follow its name: "exited with status 1", "was killed by
// signal 9 (Killed)", or "could not be waited for" when there is no status.
std::string DescribeExit(std::optional<int> wait_status);

}  // namespace ringfuse::base
