// ringfuse-trace summary: per-opcode counts, errors and latency percentiles of a JSON trace
// (ringfuse/json_trace.h). A line that is not a trace event is reported by number and skipped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ringfuse::tools {

struct OpcodeTally {
  uint64_t requests = 0;
  uint64_t replies = 0;
  uint64_t errors = 0;               // replies with an error
  std::vector<double> latencies_us;  // of the replies that carry one
};

class TraceSummary {
 public:
  // One line of the file, without its newline; `number` counts from 1.
  void Add(uint64_t number, std::string_view line);

  // The table, opcodes by number of requests, then the totals line.
  std::string Report();

  const std::map<std::string, OpcodeTally>& by_opcode() const { return by_opcode_; }
  uint64_t malformed() const { return malformed_; }
  uint64_t dropped() const { return dropped_; }
  // "line 7: ..." for each line skipped.
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::map<std::string, OpcodeTally> by_opcode_;
  uint64_t malformed_ = 0;
  uint64_t dropped_ = 0;
  std::vector<std::string> problems_;
};

}  // namespace ringfuse::tools
