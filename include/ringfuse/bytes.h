// Byte spans and the one way the protocol turns a value into its wire bytes.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>

#include "ringfuse/export.h"

RINGFUSE_PUBLIC_BEGIN

namespace ringfuse {

using ConstBytes = std::span<const std::byte>;
using MutableBytes = std::span<std::byte>;

template <typename T>
ConstBytes AsBytes(const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  return {reinterpret_cast<const std::byte*>(&value), sizeof(T)};
}

inline ConstBytes AsBytes(std::string_view text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

}  // namespace ringfuse

RINGFUSE_PUBLIC_END
