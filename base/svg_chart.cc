// Line charts for the HTML reports (svg_chart.h).
#include "tessera/base/svg_chart.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/base/html.h"
#include "tessera/base/text_format.h"

namespace tessera::base {
namespace {

// The plot area inside the chart: room on the left for the y ticks, below for the x ticks and
// label, above for the y label.
constexpr double kLeft = 64, kRight = 16, kTop = 22, kBottom = 40;

struct Range {
  double lo = 0, hi = 1;
};

// The finite extent of x or y over every series, widened when empty or a single value.
Range Extent(const LineChart& chart, bool y) {
  double lo = INFINITY, hi = -INFINITY;
  for (const ChartSeries& s : chart.series) {
    for (const auto& [px, py] : s.points) {
      const double v = y ? py : px;
      if (!std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (!(lo <= hi)) return {0, 1};
  if (lo == hi) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    return {lo - pad, hi + pad};
  }
  if (y) {  // a little air above and below the curves
    const double pad = (hi - lo) * 0.05;
    return {lo - pad, hi + pad};
  }
  return {lo, hi};
}

// The points drawn: every k-th and the last when there are more than max_points.
std::vector<std::pair<double, double>> Thinned(const ChartSeries& s, size_t max_points) {
  if (s.markers || max_points < 2 || s.points.size() <= max_points) return s.points;
  const size_t every = (s.points.size() + max_points - 1) / max_points;
  std::vector<std::pair<double, double>> out;
  for (size_t i = 0; i < s.points.size(); i += every) out.push_back(s.points[i]);
  if (out.back() != s.points.back()) out.push_back(s.points.back());
  return out;
}

struct Frame {
  double width, height;
  Range x, y;
  double X(double v) const {
    return kLeft + (v - x.lo) / (x.hi - x.lo) * (width - kLeft - kRight);
  }
  double Y(double v) const {
    return height - kBottom - (v - y.lo) / (y.hi - y.lo) * (height - kTop - kBottom);
  }
};

std::string Axes(const LineChart& c, const Frame& f) {
  std::string body;
  for (double t : NiceTicks(f.y.lo, f.y.hi, 5)) {
    absl::StrAppend(
        &body,
        absl::StrFormat("<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#eee\"/>\n",
                        kLeft, f.Y(t), f.width - kRight, f.Y(t)),
        SvgText(kLeft - 6, f.Y(t) + 4, TickLabel(t), "text-anchor=\"end\" fill=\"#555\""));
  }
  const int x_ticks =
      c.integer_x ? static_cast<int>(std::clamp(std::floor(f.x.hi - f.x.lo), 1.0, 8.0)) : 8;
  for (double t : NiceTicks(f.x.lo, f.x.hi, x_ticks)) {
    absl::StrAppend(&body, SvgText(f.X(t), f.height - kBottom + 16, TickLabel(t),
                                   "text-anchor=\"middle\" fill=\"#555\""));
  }
  const double bottom = f.height - kBottom;
  absl::StrAppend(
      &body,
      absl::StrFormat("<path d=\"M%.2f %.2fV%.2fH%.2f\" fill=\"none\" stroke=\"#999\"/>\n", kLeft,
                      kTop, bottom, f.width - kRight),
      SvgText(kLeft, kTop - 8, c.y_label, "fill=\"#555\""),
      SvgText(f.width - kRight, f.height - 6, c.x_label, "text-anchor=\"end\" fill=\"#555\""));
  return body;
}

// One series: polylines between the non-finite values, and the markers.
std::string Series(const ChartSeries& s, const Frame& f, size_t max_points) {
  std::string body, line;
  size_t in_line = 0;
  const auto flush = [&] {
    if (in_line > 1) {
      absl::StrAppend(&body, "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"", s.color,
                      "\" points=\"", line, "\"/>\n");
    }
    line.clear();
    in_line = 0;
  };
  const std::vector<std::pair<double, double>> points = Thinned(s, max_points);
  for (const auto& [x, y] : points) {
    if (!std::isfinite(x) || !std::isfinite(y)) {
      flush();
      continue;
    }
    absl::StrAppend(&line, in_line++ > 0 ? " " : "",
                    absl::StrFormat("%.2f,%.2f", f.X(x), f.Y(y)));
    if (s.markers || points.size() == 1) {
      const std::string title =
          absl::StrCat(s.name, " at ", TickLabel(x), ": ", absl::StrFormat("%.6g", y));
      absl::StrAppend(&body, absl::StrFormat("<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" "
                                             "fill=\"%s\"><title>%s</title></circle>\n",
                                             f.X(x), f.Y(y), s.color, HtmlEscape(title)));
    }
  }
  flush();
  return body;
}

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int count) {
  if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  const double raw = (hi - lo) / std::max(count, 1);
  const double exponent = std::floor(std::log10(raw));
  double m = 1;
  for (double candidate : {1.0, 2.0, 5.0, 10.0}) {
    m = candidate;
    if (m * std::pow(10.0, exponent) >= raw) break;
  }
  // Tick k is k * m * 10^exponent, computed as k * m / 10^-exponent for small steps so that
  // 0.6 comes out as 0.6, not 0.6000000000000001.
  const double scale = std::pow(10.0, std::abs(exponent));
  const auto tick = [&](int64_t k) {
    const double units = static_cast<double>(k) * m;
    return exponent < 0 ? units / scale : units * scale;
  };
  std::vector<double> ticks;
  const double step = tick(1);
  for (int64_t k = static_cast<int64_t>(std::ceil(lo / step - 1e-9));
       tick(k) <= hi + step * 1e-9; ++k) {
    ticks.push_back(tick(k) + 0.0);  // + 0.0: no -0
  }
  if (ticks.size() < 2) return {lo, hi};
  return ticks;
}

std::string TickLabel(double value) {
  if (std::abs(value) >= 1e4) return HumanCount(value);
  return absl::StrFormat("%.4g", value);
}

std::string LineChartSvg(const LineChart& chart) {
  const Frame f{chart.width, chart.height, Extent(chart, false), Extent(chart, true)};
  std::string body = Axes(chart, f);
  bool any = false;
  for (const ChartSeries& s : chart.series) {
    any = any || !s.points.empty();
    absl::StrAppend(&body, Series(s, f, chart.max_points));
  }
  if (!any) absl::StrAppend(&body, SvgText(kLeft + 12, kTop + 20, "(no data)", "fill=\"#555\""));
  return SvgRoot(chart.width, chart.height, chart.label, body);
}

}  // namespace tessera::base
