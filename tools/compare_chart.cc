#include "tools/compare_chart.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/compare_report.h"
#include "tools/compare_svg.h"

namespace ringfuse::tools {
namespace {

constexpr int kLabelWidth = 330;
constexpr int kBarArea = 420;
constexpr int kBarHeight = 12;
constexpr int kRowGap = 14;
constexpr int kLegendHeight = 30;
// Ratios beyond this (native's create is ~15x FUSE's) would squash every other bar: they are
// drawn to the edge and labelled with their value.
constexpr double kMaxRatio = 3.0;

// The bars of one row, from `y`; returns the height used.
int RowBars(const CompareOptions& options, const std::vector<Sample>& samples, const ReportRow& row,
            const Cell& reference, int y, std::string& svg) {
  absl::StrAppendFormat(&svg, "<text x=\"10\" y=\"%d\">%s</text>\n", y + kBarHeight,
                        XmlText(RowTitle(row)));
  int height = 0;
  for (size_t i = 0; i < options.configs.size(); ++i) {
    const Cell cell = Summarize(samples, options.configs[i].label, row);
    const int bar_y = y + height;
    height += kBarHeight + 2;
    if (!cell.median) continue;
    const double ratio = *cell.median / *reference.median;
    const int width = static_cast<int>(std::min(ratio, kMaxRatio) / kMaxRatio * kBarArea);
    absl::StrAppendFormat(&svg,
                          "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>"
                          "<text x=\"%d\" y=\"%d\">%.2fx</text>\n",
                          kLabelWidth, bar_y, std::max(width, 1), kBarHeight, ConfigColor(i),
                          kLabelWidth + width + 4, bar_y + kBarHeight - 2, ratio);
  }
  return height;
}

}  // namespace

std::string ChartSvg(const CompareOptions& options, const std::vector<Sample>& samples) {
  const std::optional<std::string> reference = ReferenceDaemon(options);
  std::string body;
  int y = kLegendHeight;
  for (const ReportRow& row : ReportRows(options.workloads, options.threads)) {
    const Cell reference_cell = reference ? Summarize(samples, *reference, row) : Cell{};
    // A clean stop is no ratio, and a reference of 0 has none. Futex calls and switches per
    // operation are near 0 where nothing waits, and a ratio of two such counts says nothing.
    if (row.metric == kCleanStopMetric || IsContentionMetric(row.metric) ||
        !(reference_cell.median > 0)) {
      continue;
    }
    y += RowBars(options, samples, row, reference_cell, y, body) + kRowGap;
  }
  const int one_x = kLabelWidth + static_cast<int>(kBarArea / kMaxRatio);
  const int width = kLabelWidth + kBarArea + 60;
  return absl::StrCat(
      absl::StrFormat("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                      "font-family=\"sans-serif\" font-size=\"11\">\n",
                      width, y + 20),
      absl::StrFormat("<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"),
      ConfigLegend(options), body,
      absl::StrFormat("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\" "
                      "stroke-dasharray=\"4 3\"/>\n<text x=\"%d\" y=\"%d\">1.0x = %s</text>\n",
                      one_x, kLegendHeight - 4, one_x, y, one_x + 4, y + 14,
                      XmlText(reference.value_or("(none)"))),
      "</svg>\n");
}

}  // namespace ringfuse::tools
