// One JSON object on one line, appended to a caller's string: a buffer reused across lines
// allocates nothing once it has grown to a line's size.
//
// Strings are bytes, not necessarily UTF-8 (file names): valid UTF-8 is written as it is;
// quote, backslash, control characters and each byte of an invalid UTF-8 sequence are written as
// \u00XX (\" and \\ for the first two). The line is always valid JSON. A decoder sees an escaped
// byte 0xXX as the code point U+00XX, so a name that is not UTF-8 reads back as its Latin-1
// reading; the raw line still shows which bytes were escaped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ringfuse::internal {

// Keys are written as they are: names from the code (VisitRequestFields' and the tracer's), which
// need no escaping.
class JsonLine {
 public:
  explicit JsonLine(std::string& out) : out_(out) { out_.push_back('{'); }

  JsonLine& Unsigned(std::string_view key, uint64_t value);
  JsonLine& Signed(std::string_view key, int64_t value);
  JsonLine& String(std::string_view key, std::string_view bytes);
  // Closes the object and the line.
  void End() { out_.append("}\n"); }

 private:
  void Key(std::string_view key);

  std::string& out_;
  bool first_ = true;
};

// `bytes` as the inside of a JSON string, escaped as above.
void AppendJsonEscaped(std::string& out, std::string_view bytes);

}  // namespace ringfuse::internal
