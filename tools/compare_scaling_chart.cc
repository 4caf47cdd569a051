#include "tools/compare_scaling_chart.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/compare_report.h"
#include "tools/compare_scaling.h"
#include "tools/compare_svg.h"

namespace ringfuse::tools {
namespace {

constexpr int kPanelWidth = 400;
constexpr int kPlotLeft = 60;  // room for the ops/s labels
constexpr int kPlotWidth = 310;
constexpr int kPlotTop = 60;  // below the legend and the panel's title
constexpr int kPlotHeight = 220;
constexpr int kHeight = kPlotTop + kPlotHeight + 40;

// One config's median ops/s at each thread count, nothing where it has none.
std::vector<std::optional<double>> Series(const std::vector<Sample>& samples,
                                          const std::string& label, const std::string& workload,
                                          const std::vector<int>& threads) {
  std::vector<std::optional<double>> series;
  for (const int count : threads) {
    series.push_back(Summarize(samples, label, {workload, "ops_per_s", count}).median);
  }
  return series;
}

// ops/s on a log scale of whole decades: native's stat storm runs 20 times faster than a FUSE
// daemon's, and on a linear scale would flatten every other line; on a log scale, lines that
// rise alike scale alike.
struct YScale {
  int low_decade = 0;  // 10^low at the bottom of the plot, 10^high at its top
  int high_decade = 1;

  static YScale Spanning(double smallest, double largest) {
    YScale scale{static_cast<int>(std::floor(std::log10(smallest))),
                 static_cast<int>(std::ceil(std::log10(largest)))};
    scale.high_decade = std::max(scale.high_decade, scale.low_decade + 1);
    return scale;
  }
  int Y(double value) const {
    const double fraction =
        (std::log10(value) - low_decade) / static_cast<double>(high_decade - low_decade);
    return kPlotTop + kPlotHeight - static_cast<int>(fraction * kPlotHeight);
  }
};

int X(int left, size_t index, size_t counts) {
  return left + kPlotLeft + static_cast<int>(index * kPlotWidth / (counts - 1));
}

// Axes, a grid line at each decade of ops/s, and the thread counts under the plot.
std::string Axes(int left, const std::vector<int>& threads, const YScale& scale) {
  const int x0 = left + kPlotLeft, y1 = kPlotTop + kPlotHeight;
  std::string svg = absl::StrFormat("<path d=\"M%d %d V%d H%d\" fill=\"none\" stroke=\"black\"/>\n",
                                    x0, kPlotTop, y1, x0 + kPlotWidth);
  for (int decade = scale.low_decade; decade <= scale.high_decade; ++decade) {
    const int y = scale.Y(std::pow(10.0, decade));
    absl::StrAppendFormat(&svg,
                          "<path d=\"M%d %d H%d\" stroke=\"#ddd\"/>"
                          "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
                          x0 + 1, y, x0 + kPlotWidth, x0 - 4, y + 4,
                          Number(std::pow(10.0, decade)));
  }
  for (size_t i = 0; i < threads.size(); ++i) {
    absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%d</text>\n",
                          X(left, i, threads.size()), y1 + 14, threads[i]);
  }
  absl::StrAppendFormat(&svg,
                        "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">client threads "
                        "(ops/s on a log scale)</text>\n",
                        x0 + kPlotWidth / 2, y1 + 30);
  return svg;
}

// One config's line, broken where a count has no value, with a dot at each value.
std::string Line(int left, const std::vector<std::optional<double>>& series, const YScale& scale,
                 const char* color) {
  std::string path, dots;
  bool drawing = false;
  for (size_t i = 0; i < series.size(); ++i) {
    if (!(series[i] > 0)) {  // nothing to place on a log scale
      drawing = false;
      continue;
    }
    const int x = X(left, i, series.size()), y = scale.Y(*series[i]);
    absl::StrAppendFormat(&path, "%s%d %d ", drawing ? "L" : "M", x, y);
    absl::StrAppendFormat(&dots, "<circle cx=\"%d\" cy=\"%d\" r=\"3\" fill=\"%s\"/>", x, y, color);
    drawing = true;
  }
  if (path.empty()) return "";
  return absl::StrFormat("<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>%s\n",
                         path, color, dots);
}

std::string Panel(const CompareOptions& options, const std::vector<Sample>& samples,
                  const std::string& workload, int left) {
  std::vector<std::vector<std::optional<double>>> lines;
  double smallest = 0, largest = 0;
  for (const CompareConfig& config : options.configs) {
    lines.push_back(Series(samples, config.label, workload, options.threads));
    for (const std::optional<double>& value : lines.back()) {
      if (!(value > 0)) continue;
      smallest = smallest > 0 ? std::min(smallest, *value) : *value;
      largest = std::max(largest, *value);
    }
  }
  // Without values: empty axes from 1 to 10 ops/s rather than the log of 0.
  const YScale scale = largest > 0 ? YScale::Spanning(smallest, largest) : YScale{};
  std::string svg = absl::StrFormat(
      "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>\n", left + kPlotLeft, kPlotTop - 16,
      XmlText(RowTitle({workload, "ops_per_s"}) + " by client threads"));
  absl::StrAppend(&svg, Axes(left, options.threads, scale));
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::StrAppend(&svg, Line(left, lines[i], scale, ConfigColor(i)));
  }
  return svg;
}

}  // namespace

std::string ScalingChartSvg(const CompareOptions& options, const std::vector<Sample>& samples) {
  const std::vector<std::string> scaled = ScaledWorkloads(options);
  if (scaled.empty()) return "";
  std::string panels;
  for (size_t i = 0; i < scaled.size(); ++i) {
    absl::StrAppend(&panels, Panel(options, samples, scaled[i], static_cast<int>(i) * kPanelWidth));
  }
  return absl::StrCat(
      absl::StrFormat("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                      "font-family=\"sans-serif\" font-size=\"11\">\n"
                      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                      static_cast<int>(scaled.size()) * kPanelWidth, kHeight),
      ConfigLegend(options), panels, "</svg>\n");
}

}  // namespace ringfuse::tools
