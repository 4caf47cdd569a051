// A reply body comes from the handler in parts (a struct, then a name, say), and a notification
// is built in parts too. Written to /dev/fuse they go as an iovec; where one buffer must hold
// them (a ring's reply slot or payload, a reply kept for later) they are joined here.
#pragma once

#include <cstring>
#include <span>

#include "ringfuse/bytes.h"

namespace ringfuse::internal {

// The parts that go to the kernel: none for an error, whose reply is the header alone.
inline std::span<const ConstBytes> ReplyParts(int32_t error, std::span<const ConstBytes> body) {
  return error == 0 ? body : std::span<const ConstBytes>();
}

inline size_t PartsSize(std::span<const ConstBytes> parts) {
  size_t size = 0;
  for (ConstBytes part : parts) size += part.size();
  return size;
}

// Copies `parts` one after another to the start of `out`, which holds at least PartsSize(parts)
// bytes; returns that size.
inline size_t JoinParts(std::span<const ConstBytes> parts, MutableBytes out) {
  size_t at = 0;
  for (ConstBytes part : parts) {
    // An empty part may have no data pointer, which memcpy must not be given.
    if (!part.empty()) std::memcpy(out.data() + at, part.data(), part.size());
    at += part.size();
  }
  return at;
}

}  // namespace ringfuse::internal
