// A client of a mount while its daemon restarts: one thread that stats a few paths in a tight
// loop and times every call, so that the longest call shows how long clients waited.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace ringfuse::tools {

struct StatProbe {
  enum class Kind {
    kCached,   // lstat of an entry the kernel holds valid: answered without the daemon
    kRefetch,  // statx with AT_STATX_FORCE_SYNC: a GETATTR the daemon must answer, of a node
               // it restored
    kMissing,  // lstat of a name that does not exist (negative_timeout=0): a LOOKUP each time,
               // answered ENOENT
  };
  std::string path;
  Kind kind;
};

struct StatLoopResult {
  int64_t calls = 0;
  int failed_calls = 0;       // an unexpected answer: any error but ENOENT for kMissing
  std::string first_failure;  // what the first failed call got
  double max_us = 0;          // the longest call
  double max_cached_us = 0;   // the longest kCached call
};

class StatLoop {
 public:
  // Starts the loop over `probes` (at least one), in turn, at once.
  explicit StatLoop(std::vector<StatProbe> probes);
  StatLoop(const StatLoop&) = delete;
  StatLoop& operator=(const StatLoop&) = delete;
  // Stops the loop unless Stop() did.
  ~StatLoop();

  // Lets the call in progress finish and returns what the loop saw.
  StatLoopResult Stop();

 private:
  void Run();

  const std::vector<StatProbe> probes_;
  std::atomic<bool> stop_{false};
  StatLoopResult result_;  // written by the loop's thread until it is joined
  std::thread thread_;
};

}  // namespace ringfuse::tools
