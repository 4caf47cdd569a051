// What ringfuse-bench compare's SVG charts share: escaping, one colour per config (the same in
// every chart), and the legend that names them.
#pragma once

#include <string>

#include "tools/compare_run.h"

namespace ringfuse::tools {

// Text with the characters XML reserves escaped.
std::string XmlText(const std::string& text);

// The colour of the config at `index` in CompareOptions::configs.
const char* ConfigColor(size_t index);

// One swatch and label per config, in a row at the top of a chart (y 8 to 18).
std::string ConfigLegend(const CompareOptions& options);

}  // namespace ringfuse::tools
