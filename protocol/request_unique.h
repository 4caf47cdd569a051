// Where a request message from /dev/fuse says which request it is. A transport marks the request
// for INTERRUPT before the dispatcher parses it, and a message too short to parse still gets its
// EIO reply when the unique is there.
#pragma once

#include <cstddef>
#include <cstring>
#include <optional>

#include "ringfuse/bytes.h"
#include "ringfuse/wire.h"

namespace ringfuse::internal {

// The unique from the request header at the start of `message`, if the message reaches that far.
inline std::optional<uint64_t> ReadUnique(ConstBytes message) {
  constexpr size_t kAt = offsetof(wire::InHeader, unique);
  uint64_t unique;
  if (message.size() < kAt + sizeof(unique)) return std::nullopt;
  std::memcpy(&unique, message.data() + kAt, sizeof(unique));
  return unique;
}

}  // namespace ringfuse::internal
