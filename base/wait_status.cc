#include "base/wait_status.h"

#include <sys/wait.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace ringfuse::base {

bool ExitedCleanly(std::optional<int> wait_status) {
  return wait_status && WIFEXITED(*wait_status) && WEXITSTATUS(*wait_status) == 0;
}

std::string DescribeExit(std::optional<int> wait_status) {
  if (!wait_status) return "could not be waited for";
  if (WIFEXITED(*wait_status))
    return absl::StrCat("exited with status ", WEXITSTATUS(*wait_status));
  if (WIFSIGNALED(*wait_status))
    return absl::StrCat("was killed by signal ", WTERMSIG(*wait_status), " (",
                        ::strsignal(WTERMSIG(*wait_status)), ")");
  return absl::StrCat("ended with wait status ", *wait_status);
}

}  // namespace ringfuse::base
