// A bounds-checked cursor over bytes the kernel sent.
//
// Every read either succeeds completely or returns nothing and leaves the cursor where it was:
// kernel input is never trusted to be long enough, aligned, or NUL-terminated.
#pragma once

#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

#include "ringfuse/bytes.h"

namespace ringfuse::base {

class Reader {
 public:
  explicit Reader(ConstBytes bytes) : bytes_(bytes) {}

  size_t remaining() const { return bytes_.size(); }
  ConstBytes rest() const { return bytes_; }

  // Copies a T out of the buffer (no alignment assumed).
  template <typename T>
  std::optional<T> Read() {
    static_assert(std::is_trivially_copyable_v<T>);
    if (bytes_.size() < sizeof(T)) return std::nullopt;
    T value;
    std::memcpy(&value, bytes_.data(), sizeof(T));
    bytes_ = bytes_.subspan(sizeof(T));
    return value;
  }

  // Reads a T that older kernels send shortened to `available` bytes (available <= sizeof(T));
  // the missing tail reads as zero.
  template <typename T>
  std::optional<T> ReadPrefix(size_t available) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (available > sizeof(T) || bytes_.size() < available) return std::nullopt;
    T value{};
    std::memcpy(&value, bytes_.data(), available);
    bytes_ = bytes_.subspan(available);
    return value;
  }

  std::optional<ConstBytes> ReadBytes(size_t count) {
    if (bytes_.size() < count) return std::nullopt;
    ConstBytes out = bytes_.first(count);
    bytes_ = bytes_.subspan(count);
    return out;
  }

  // A NUL-terminated string inside the buffer; the view excludes the NUL.
  std::optional<std::string_view> ReadCString() {
    if (bytes_.empty()) return std::nullopt;
    const void* nul = std::memchr(bytes_.data(), 0, bytes_.size());
    if (nul == nullptr) return std::nullopt;
    const size_t length = static_cast<const std::byte*>(nul) - bytes_.data();
    std::string_view out(reinterpret_cast<const char*>(bytes_.data()), length);
    bytes_ = bytes_.subspan(length + 1);
    return out;
  }

 private:
  ConstBytes bytes_;
};

}  // namespace ringfuse::base
