// The fields of records that go from one process to another on the same machine (a handover's):
// integers in native order, strings as a u64 length and their bytes, bools as one byte. Every
// read is bounds-checked and says whether it succeeded, so a record that ends early is refused
// rather than read past.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "base/reader.h"

namespace ringfuse::base {

template <typename T>
void PutField(std::string& out, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

inline void PutField(std::string& out, bool value) {
  PutField(out, static_cast<uint8_t>(value ? 1 : 0));
}

inline void PutString(std::string& out, std::string_view text) {
  PutField(out, static_cast<uint64_t>(text.size()));
  out.append(text);
}

template <typename T>
bool GetField(Reader& in, T& value) {
  std::optional<T> read = in.Read<T>();
  if (read) value = *read;
  return read.has_value();
}

// A byte, not a bool copied in: a byte other than 0 or 1 would be no valid bool.
inline bool GetField(Reader& in, bool& value) {
  uint8_t byte = 0;
  if (!GetField(in, byte) || byte > 1) return false;
  value = byte == 1;
  return true;
}

inline bool GetString(Reader& in, std::string& text) {
  uint64_t size = 0;
  if (!GetField(in, size) || size > in.remaining()) return false;
  std::optional<ConstBytes> bytes = in.ReadBytes(size);
  text.assign(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  return true;
}

}  // namespace ringfuse::base
