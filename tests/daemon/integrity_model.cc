#include "tests/daemon/integrity_model.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace ringfuse::integrity {
namespace {

// How many bytes of context a report shows on each side of the first difference.
constexpr size_t kContext = 8;

int ByteAt(std::string_view data, size_t index) {
  return index < data.size() ? static_cast<unsigned char>(data[index]) : -1;
}

std::string HexAround(std::string_view data, size_t index, uint64_t base) {
  const size_t begin = index > kContext ? index - kContext : 0;
  const size_t end = std::min(data.size(), index + kContext);
  std::string text = absl::StrFormat("@%d:", base + begin);
  for (size_t i = begin; i < end; ++i) {
    const auto byte = static_cast<unsigned char>(data[i]);
    if (i == index) {
      absl::StrAppendFormat(&text, " [%02x]", byte);
    } else {
      absl::StrAppendFormat(&text, " %02x", byte);
    }
  }
  if (index >= data.size()) text += " [EOF]";
  return text;
}

}  // namespace

void Model::Write(int file, uint64_t offset, std::string_view data) {
  std::string& contents = contents_[file];
  if (contents.size() < offset + data.size()) contents.resize(offset + data.size(), '\0');
  contents.replace(offset, data.size(), data);
}

std::string_view Model::Expected(int file, uint64_t offset, uint64_t length) const {
  const std::string& contents = contents_[file];
  if (offset >= contents.size()) return {};
  return std::string_view(contents).substr(offset, length);
}

std::optional<Difference> FirstDifference(std::string_view expected, std::string_view actual,
                                          uint64_t base) {
  if (expected == actual) return std::nullopt;  // memcmp: fast even in unoptimized builds
  const auto [expected_at, actual_at] =
      std::mismatch(expected.begin(), expected.end(), actual.begin(), actual.end());
  if (expected_at == expected.end() && actual_at == actual.end()) return std::nullopt;
  const size_t index = static_cast<size_t>(expected_at - expected.begin());
  return Difference{.offset = base + index,
                    .expected = ByteAt(expected, index),
                    .actual = ByteAt(actual, index),
                    .expected_context = HexAround(expected, index, base),
                    .actual_context = HexAround(actual, index, base)};
}

}  // namespace ringfuse::integrity
