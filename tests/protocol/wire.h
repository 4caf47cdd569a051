// Hand-written wire bytes for tests, built field by field from the ABI's documented layout and
// deliberately independent of ringfuse/wire.h, so that a mistake there cannot hide in both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace ringfuse::testing {

// Appends little-endian fields. All FUSE platforms we support are little-endian.
class Wire {
 public:
  Wire& U8(uint8_t v) { return Int(v, 1); }
  Wire& U16(uint16_t v) { return Int(v, 2); }
  Wire& U32(uint32_t v) { return Int(v, 4); }
  Wire& U64(uint64_t v) { return Int(v, 8); }
  Wire& I32(int32_t v) { return Int(static_cast<uint32_t>(v), 4); }
  Wire& I64(int64_t v) { return Int(static_cast<uint64_t>(v), 8); }
  Wire& Zeros(size_t n) {
    bytes_.insert(bytes_.end(), n, std::byte{0});
    return *this;
  }
  Wire& Text(std::string_view s) {  // bytes of s, no terminator
    for (char c : s) bytes_.push_back(static_cast<std::byte>(c));
    return *this;
  }
  Wire& CString(std::string_view s) { return Text(s).U8(0); }
  Wire& Append(const std::vector<std::byte>& more) {
    bytes_.insert(bytes_.end(), more.begin(), more.end());
    return *this;
  }

  size_t size() const { return bytes_.size(); }
  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  Wire& Int(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
    return *this;
  }

  std::vector<std::byte> bytes_;
};

struct HeaderFields {
  uint32_t opcode = 0;
  uint64_t unique = 0;
  uint64_t nodeid = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t pid = 0;
  uint16_t total_extlen = 0;
};

// A whole request as the kernel writes it to /dev/fuse: the 40-byte fuse_in_header
// (len u32, opcode u32, unique u64, nodeid u64, uid u32, gid u32, pid u32, total_extlen u16,
// padding u16) followed by `body`; len is the total.
inline std::vector<std::byte> RequestMessage(const HeaderFields& h, const Wire& body) {
  Wire message;
  message.U32(static_cast<uint32_t>(40 + body.size()))
      .U32(h.opcode)
      .U64(h.unique)
      .U64(h.nodeid)
      .U32(h.uid)
      .U32(h.gid)
      .U32(h.pid)
      .U16(h.total_extlen)
      .U16(0)
      .Append(body.bytes());
  return message.bytes();
}

// A reply as the server writes it: the 16-byte fuse_out_header (len u32, error i32, unique u64)
// followed by `body`.
inline std::vector<std::byte> ReplyMessage(uint64_t unique, int32_t error, const Wire& body) {
  Wire message;
  message.U32(static_cast<uint32_t>(16 + body.size())).I32(error).U64(unique).Append(body.bytes());
  return message.bytes();
}

}  // namespace ringfuse::testing
