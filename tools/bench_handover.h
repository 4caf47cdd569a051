// ringfuse-bench handover: what one restart of ringfused without unmounting (ringfuse-ctl
// restart) costs the mount's clients, by the number of inodes the daemon's table holds, and what
// handing that table over takes (issue 11).
// ringfuse-bench crash: the same for a crash under ringfuse-ctl supervise (SIGKILL, and the
// keeper starts ringfused again): the pause, the time to a daemon serving again, and the walk
// after it, which looks every cached name up again (docs/crash-recovery.md).
#pragma once

#include <string>
#include <vector>

namespace ringfuse::tools {

struct HandoverConfig {
  std::vector<int> inode_counts;  // one tree, one daemon per count; 0: the root alone
  int runs = 10;                  // restarts per tree
  std::string transport;          // ringfused --transport=
  std::string ringfused;          // the daemon binary
  std::string ctl;                // ringfuse-ctl, the keeper (crash only)
};

// Runs the benchmark and prints its table. Returns 0; 1 when a restart failed, a stat call
// failed, the inode table lost nodes or a daemon did not end cleanly; 130 on a signal.
int RunHandover(const HandoverConfig& config);
// The same for crashes.
int RunCrash(const HandoverConfig& config);

}  // namespace ringfuse::tools
