// A line chart as one inline <svg> element, for the HTML reports (base/html.h): axes with round
// ticks, light grid lines, one polyline per series, dots with tooltips where asked. No scripts.
//
//   LineChart c{.label = "loss", .x_label = "step", .y_label = "loss"};
//   c.series.push_back({.name = "loss", .color = "#4e79a7", .points = {{1, 2.3}, {2, 2.1}}});
//   std::string svg = LineChartSvg(c);
//   NiceTicks(0, 0.93, 5);   // {0, 0.2, 0.4, 0.6, 0.8}
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tessera::base {

struct ChartSeries {
  std::string name;    // in the tooltips (escaped)
  std::string color;   // an SVG colour, e.g. "#4e79a7"
  // (x, y) in increasing x; a y that is not finite breaks the line there.
  std::vector<std::pair<double, double>> points;
  bool markers = false;  // a dot with a tooltip at each point (few points, e.g. evaluations)
};

struct LineChart {
  std::string label;             // the <svg>'s aria label (escaped)
  std::string x_label, y_label;  // under the x axis, over the y axis (escaped)
  std::vector<ChartSeries> series;
  double width = 1000, height = 240;
  bool integer_x = false;        // x counts something (steps): its ticks are whole numbers
  // A series with more points keeps every k-th (and its last), so that a long run's chart
  // stays small; series with markers keep all.
  size_t max_points = 2000;
};

std::string LineChartSvg(const LineChart& chart);

// Round values within [lo, hi]: multiples of 1, 2 or 5 times a power of ten, about `count` of
// them (at least 2 when lo < hi).
std::vector<double> NiceTicks(double lo, double hi, int count);

// A tick label: up to 4 significant digits ("0.25", "1.235", "1e-05"), SI prefixes from 10^4
// on ("12.3K").
std::string TickLabel(double value);

}  // namespace tessera::base
