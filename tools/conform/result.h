// What a run of the catalogue found: the kernel's offer, and one result per check and transport.
// report.h writes it as JSON and markdown and reads the JSON back; diff.h compares two.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ringfuse/transport_options.h"

namespace ringfuse::conform {

// The transports a check can run on, in the order the reports list them; `--transport=all`.
inline constexpr TransportKind kTransports[] = {TransportKind::kThreads, TransportKind::kUring,
                                                TransportKind::kUringCmd};

enum class Outcome { kPass, kFail, kNotOffered };

// "pass", "fail", "not offered": the words the reports use.
std::string_view OutcomeName(Outcome outcome);

// What the running kernel offers, read from uname and from the INIT request of a probe mount.
struct KernelOffer {
  std::string release;  // uname -r
  uint32_t major = 0;   // the protocol the kernel speaks, major.minor
  uint32_t minor = 0;
  uint64_t init_flags = 0;  // the INIT flags the kernel offered (wire::init_flag)
  // /sys/module/fuse/parameters/enable_uring during the run: "Y", "N", or "absent".
  std::string enable_uring;
};

struct Result {
  std::string check{};      // Check::name
  std::string transport{};  // "threads", "uring" or "uring-cmd"
  Outcome outcome = Outcome::kPass;
  std::string reason{};  // why it failed, or why the kernel does not offer it
  // What the check saw, one line each: requests, the client's results, expectations not met.
  std::vector<std::string> evidence{};
  // Coverage checks: the opcodes each client action produced, in order, by action.
  std::map<std::string, std::vector<std::string>> coverage{};
  double seconds = 0;
};

struct Report {
  KernelOffer kernel;
  uint32_t ringfuse_minor = 0;  // the newest protocol minor this ringfuse types
  std::vector<Result> results;
  // Every opcode the kernel sent during the run, by name, on any transport.
  std::vector<std::string> opcodes_seen;
};

}  // namespace ringfuse::conform
