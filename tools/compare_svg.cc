#include "tools/compare_svg.h"

#include <iterator>

#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace ringfuse::tools {
namespace {

constexpr const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                   "#59a14f", "#edc948", "#b07aa1", "#9c755f"};

}  // namespace

std::string XmlText(const std::string& text) {
  return absl::StrReplaceAll(text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}});
}

const char* ConfigColor(size_t index) { return kColors[index % std::size(kColors)]; }

std::string ConfigLegend(const CompareOptions& options) {
  std::string text;
  int x = 10;
  for (size_t i = 0; i < options.configs.size(); ++i) {
    const std::string& label = options.configs[i].label;
    absl::StrAppendFormat(&text,
                          "<rect x=\"%d\" y=\"8\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                          "<text x=\"%d\" y=\"17\">%s</text>\n",
                          x, ConfigColor(i), x + 14, XmlText(label));
    x += 24 + 7 * static_cast<int>(label.size());
  }
  return text;
}

}  // namespace ringfuse::tools
