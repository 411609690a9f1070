// The HTML reports' shared pieces: escaping, cards, and line charts (ticks, escaping, breaks at
// values that are not finite, thinning of long series).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tessera/base/html.h"
#include "tessera/base/svg_chart.h"

namespace tessera::base {
namespace {

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlTest, EscapesTextAndCards) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  const std::string card = HtmlCard("<1>", "a&b", "good");
  EXPECT_NE(card.find("<b class=\"good\">&lt;1&gt;</b>"), std::string::npos) << card;
  EXPECT_NE(card.find("a&amp;b"), std::string::npos) << card;
  EXPECT_NE(ReportCss().find(".card"), absl::string_view::npos);
}

TEST(HtmlTest, NiceTicks) {
  EXPECT_EQ(NiceTicks(0, 0.93, 5), (std::vector<double>{0, 0.2, 0.4, 0.6, 0.8}));
  EXPECT_EQ(NiceTicks(1, 6, 8), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(NiceTicks(-1, 1, 4), (std::vector<double>{-1, -0.5, 0, 0.5, 1}));
  EXPECT_EQ(NiceTicks(2, 2, 5), (std::vector<double>{2}));
  EXPECT_EQ(TickLabel(0.25), "0.25");
  EXPECT_EQ(TickLabel(12300), "12.3K");
}

TEST(HtmlTest, LineChartEscapesAndBreaksAtNaN) {
  LineChart c{.label = "a<b", .x_label = "step", .y_label = "x&y"};
  c.series.push_back({.name = "s<1>", .color = "#4e79a7",
                      .points = {{1, 1}, {2, 2}, {3, NAN}, {4, 1}, {5, 3}}});
  c.series.push_back({.name = "m\"", .color = "#f28e2b", .points = {{2, 1.5}, {4, 2}},
                      .markers = true});
  const std::string svg = LineChartSvg(c);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u) << svg;
  EXPECT_NE(svg.find("aria-label=\"a&lt;b\""), std::string::npos);
  EXPECT_NE(svg.find(">x&amp;y</text>"), std::string::npos);
  EXPECT_EQ(svg.find("s<1>"), std::string::npos);
  EXPECT_EQ(Count(svg, "<polyline"), 3);  // the NaN splits the first series in two
  EXPECT_EQ(Count(svg, "<circle"), 2);
  EXPECT_NE(svg.find("<title>m&quot; at 4: 2</title>"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("nan"), std::string::npos);
}

TEST(HtmlTest, LongSeriesAreThinnedAndEmptyChartsSaySo) {
  LineChart c{.label = "long", .max_points = 100};
  ChartSeries s{.name = "s", .color = "#000"};
  for (int i = 0; i < 1000; ++i) s.points.emplace_back(i, std::sin(i * 0.01));
  c.series.push_back(s);
  const std::string svg = LineChartSvg(c);
  const size_t begin = svg.find("points=\""), end = svg.find('"', begin + 8);
  const int points = Count(svg.substr(begin, end - begin), ",");
  EXPECT_LE(points, 101);
  EXPECT_GE(points, 100);
  EXPECT_NE(LineChartSvg({.label = "empty"}).find("(no data)"), std::string::npos);
}

}  // namespace
}  // namespace tessera::base
