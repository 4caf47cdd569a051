#include "transport/json_line.h"

#include <algorithm>
#include <charconv>

namespace ringfuse::internal {
namespace {

bool IsContinuation(unsigned char byte) { return (byte & 0xc0) == 0x80; }

// Printable ASCII other than the two characters JSON escapes.
bool IsPlain(unsigned char byte) {
  return byte >= 0x20 && byte < 0x7f && byte != '"' && byte != '\\';
}

// The length of the well-formed UTF-8 sequence that starts bytes[at] (Unicode's table 3-7: no
// overlong forms, no surrogates, nothing past U+10FFFF), or 0 if none does.
size_t Utf8SequenceAt(std::string_view bytes, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(bytes[at + i]); };
  const unsigned char lead = byte(0);
  size_t length = 0;
  unsigned char second_min = 0x80, second_max = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) second_min = 0xa0;
    if (lead == 0xed) second_max = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) second_min = 0x90;
    if (lead == 0xf4) second_max = 0x8f;
  } else {
    return 0;
  }
  if (bytes.size() - at < length || byte(1) < second_min || byte(1) > second_max) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (!IsContinuation(byte(i))) return 0;
  }
  return length;
}

void AppendEscapedByte(std::string& out, unsigned char byte) {
  static constexpr char kHex[] = "0123456789abcdef";
  const char escape[] = {'\\', 'u', '0', '0', kHex[byte >> 4], kHex[byte & 0xf]};
  out.append(escape, sizeof(escape));
}

template <typename Int>
void AppendNumber(std::string& out, Int value) {
  char digits[24];
  const std::to_chars_result end = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, end.ptr);
}

}  // namespace

void AppendJsonEscaped(std::string& out, std::string_view bytes) {
  size_t at = 0;
  while (at < bytes.size()) {
    // Most names are plain ASCII: copy each run of bytes that need nothing in one go.
    size_t plain = at;
    while (plain < bytes.size() && IsPlain(static_cast<unsigned char>(bytes[plain]))) ++plain;
    out.append(bytes.substr(at, plain - at));
    at = plain;
    if (at == bytes.size()) break;
    const auto byte = static_cast<unsigned char>(bytes[at]);
    if (byte == '"' || byte == '\\') {
      const char escape[] = {'\\', static_cast<char>(byte)};
      out.append(escape, sizeof(escape));
      ++at;
    } else if (const size_t length = byte >= 0x80 ? Utf8SequenceAt(bytes, at) : 0; length > 0) {
      out.append(bytes.substr(at, length));
      at += length;
    } else {
      AppendEscapedByte(out, byte);
      ++at;
    }
  }
}

// One resize and copy rather than four appends: keys make up most of a line.
void JsonLine::Key(std::string_view key) {
  const size_t comma = first_ ? 0 : 1;
  first_ = false;
  const size_t at = out_.size();
  out_.resize(at + comma + key.size() + 3);
  char* p = out_.data() + at;
  if (comma) *p++ = ',';
  *p++ = '"';
  p = std::copy(key.begin(), key.end(), p);
  *p++ = '"';
  *p = ':';
}

JsonLine& JsonLine::Unsigned(std::string_view key, uint64_t value) {
  Key(key);
  AppendNumber(out_, value);
  return *this;
}

JsonLine& JsonLine::Signed(std::string_view key, int64_t value) {
  Key(key);
  AppendNumber(out_, value);
  return *this;
}

JsonLine& JsonLine::String(std::string_view key, std::string_view bytes) {
  Key(key);
  out_.push_back('"');
  AppendJsonEscaped(out_, bytes);
  out_.push_back('"');
  return *this;
}

}  // namespace ringfuse::internal
