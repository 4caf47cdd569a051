/// \file
/// Byte spans and the one way the protocol turns a value into its wire bytes.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>

#include "ringfuse/export.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

/// Bytes the protocol reads or sends, owned elsewhere.
using ConstBytes = std::span<const std::byte>;
/// Bytes the protocol writes into, owned elsewhere.
using MutableBytes = std::span<std::byte>;

/// The bytes of a plain value, as the kernel sees the struct.
template <typename T>
ConstBytes AsBytes(const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  return {reinterpret_cast<const std::byte*>(&value), sizeof(T)};
}

/// The bytes of a string, without a terminating NUL.
inline ConstBytes AsBytes(std::string_view text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
