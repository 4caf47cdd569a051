// The one place that says what an io_uring user_data value means for ringfuse's rings.
//
// High 32 bits: what completed; low 32 bits: which slot (a read buffer, a ring entry). Zero is
// never used, so a completion with user_data 0 can only be a bug, and is reported as one.
#pragma once

#include <cstdint>

namespace ringfuse::internal {

enum class Completion : uint32_t {
  kInvalid = 0,
  kRead = 1,     // a READ of /dev/fuse into slot's buffer
  kWrite = 2,    // a WRITE of slot's reply to /dev/fuse
  kWake = 3,     // the wake-up eventfd was written (Stop)
  kCommand = 4,  // a FUSE-over-io_uring command of entry `slot`
  kCancel = 5,   // an ASYNC_CANCEL of slot's READ (Pause)
};

inline uint64_t EncodeUserData(Completion kind, uint32_t slot) {
  return (uint64_t{static_cast<uint32_t>(kind)} << 32) | slot;
}

struct UserData {
  Completion kind;
  uint32_t slot;
};

inline UserData DecodeUserData(uint64_t value) {
  return UserData{static_cast<Completion>(value >> 32), static_cast<uint32_t>(value)};
}

}  // namespace ringfuse::internal
