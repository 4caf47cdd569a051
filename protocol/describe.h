// What a request's arguments say, decoded: one list of which fields each opcode shows, read by
// the strace-like lines (DescribeRequest, ringfuse/observer.h) and by the JSON trace
// (ringfuse/json_trace.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ringfuse/request.h"

namespace ringfuse::internal {

// How a number reads best: flags in hex, modes in octal, the rest in decimal.
enum class FieldBase { kDecimal, kHex, kOctal };

// Receives a request's decoded arguments one at a time. Field names never repeat the header's
// (unique, nodeid, pid, uid, gid), so a consumer may put both in one flat record.
class FieldVisitor {
 public:
  virtual ~FieldVisitor() = default;
  virtual void Number(std::string_view name, uint64_t value, FieldBase base) = 0;
  // Bytes from the wire (a name, a symlink target): anything but NUL, not necessarily UTF-8.
  virtual void Bytes(std::string_view name, std::string_view value) = 0;
  // Printable ASCII the decoder made (INIT's flag names).
  virtual void Text(std::string_view name, std::string_view value) = 0;
};

// The arguments worth seeing, in wire order; fixed structs in full would drown a debug log.
void VisitRequestFields(const RequestArgs& args, FieldVisitor& visitor);

}  // namespace ringfuse::internal
