// The SVG charts of the HTML report: inline, no scripts, every label escaped.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/partitioner/plan.h"
#include "tessera/partitioner/plan_output_impl.h"

namespace tessera::partitioner::internal {
namespace {

constexpr double kWidth = 1000;

std::string Rect(double x, double y, double w, double h, absl::string_view fill,
                 absl::string_view title) {
  return absl::StrFormat(
      "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>%s</title>"
      "</rect>\n",
      x, y, std::max(w, 0.0), std::max(h, 0.0), fill, HtmlEscape(title));
}

std::string Text(double x, double y, absl::string_view text, absl::string_view extra = "") {
  return absl::StrFormat("<text x=\"%.2f\" y=\"%.2f\" %s>%s</text>\n", x, y, extra,
                         HtmlEscape(text));
}

std::string Svg(double height, absl::string_view label, const std::string& body) {
  return absl::StrFormat(
      "<svg viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
      "height=\"%.0f\" role=\"img\" aria-label=\"%s\" font-family=\"sans-serif\" "
      "font-size=\"13\">\n%s</svg>\n",
      kWidth, height, kWidth, height, HtmlEscape(label), body);
}

}  // namespace

std::string StrategyColor(absl::string_view s) {
  if (s == "data_parallel") return "#4e79a7";
  if (s == "model_parallel") return "#e15759";
  if (s == "late_multiply") return "#f28e2b";
  if (s == "replicated") return "#9c9c9c";
  return "#76b7b2";
}

std::string StrategyStripSvg(const Plan& plan) {
  // One cell per layer in plan order, width proportional to the layer's compute
  // plus comm time (a minimum width keeps cheap layers visible).
  const size_t n = plan.layers.size();
  if (n == 0) return Svg(30, "no layers", Text(0, 20, "(no layers)"));
  std::vector<double> weight(n);
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    weight[i] = plan.layers[i].compute_s + plan.layers[i].comm_s;
    total += weight[i];
  }
  const double min_share = 0.25 / static_cast<double>(n);
  double norm = 0;
  for (double& w : weight) norm += (w = std::max(total > 0 ? w / total : 0.0, min_share));
  std::string body;
  double x = 0;
  for (size_t i = 0; i < n; ++i) {
    const LayerPlan& l = plan.layers[i];
    const double w = kWidth * weight[i] / norm;
    const std::string s(StrategyName(l.strategy));
    absl::StrAppend(&body, Rect(x, 0, w, 40, StrategyColor(s),
                                absl::StrCat(i, " ", l.name, " (", l.op, "): ", s, ", ",
                                             base::HumanSeconds(l.compute_s + l.comm_s))));
    x += w;
  }
  absl::StrAppend(&body, Text(0, 58, "layers in order, width = compute + comm time", "fill=\"#555\""));
  return Svg(64, "strategy per layer", body);
}

std::string MemorySvg(const Plan& plan) {
  const MemoryPrediction& m = plan.memory;
  const size_t n = m.peak_bytes.size();
  if (n == 0) return Svg(30, "no memory data", Text(0, 20, "(no per-device memory)"));
  const double peak = static_cast<double>(*std::max_element(m.peak_bytes.begin(), m.peak_bytes.end()));
  const double top = std::max(peak, static_cast<double>(m.device_capacity_bytes)) * 1.1;
  const double left = 80, chart_h = 200, base = 20 + chart_h;
  const double slot = (kWidth - left) / static_cast<double>(n);
  std::string body;
  for (int k = 0; k <= 4; ++k) {  // gridlines at 0, 25, ... 100% of the axis
    const double v = top * k / 4, y = base - chart_h * k / 4;
    absl::StrAppend(&body, absl::StrFormat("<line x1=\"%.0f\" y1=\"%.2f\" x2=\"%.0f\" y2=\"%.2f\" "
                                           "stroke=\"#ddd\"/>\n", left, y, kWidth, y),
                    Text(0, y + 4, base::HumanBytes(v), "fill=\"#555\""));
  }
  for (size_t d = 0; d < n; ++d) {
    const double h = chart_h * static_cast<double>(m.peak_bytes[d]) / top;
    const bool over = m.peak_bytes[d] > m.device_capacity_bytes;
    absl::StrAppend(&body, Rect(left + slot * d + slot * 0.1, base - h, slot * 0.8, h,
                                over ? "#e15759" : "#59a14f",
                                absl::StrCat("device ", d, ": ", base::HumanBytes(m.peak_bytes[d]))));
  }
  const double cap_y = base - chart_h * static_cast<double>(m.device_capacity_bytes) / top;
  absl::StrAppend(&body,
                  absl::StrFormat("<line x1=\"%.0f\" y1=\"%.2f\" x2=\"%.0f\" y2=\"%.2f\" "
                                  "stroke=\"#c00\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n",
                                  left, cap_y, kWidth, cap_y),
                  Text(left + 4, cap_y - 5,
                       absl::StrCat("capacity ", base::HumanBytes(m.device_capacity_bytes)),
                       "fill=\"#c00\""),
                  Text(left, base + 18,
                       absl::StrCat("devices 0 to ", n - 1, " (peak bytes per device)"),
                       "fill=\"#555\""));
  return Svg(base + 26, "memory per device", body);
}

std::string StepTimeSvg(const Plan& plan) {
  const StepPrediction& p = plan.predicted;
  const double hidden = std::max(p.comm_s - p.exposed_comm_s, 0.0);
  const double rest = std::max(p.step_time_s - p.exposed_comm_s, 0.0);  // compute on the critical path
  const double top = std::max({p.step_time_s, rest + hidden, plan.data_parallel.step_time_s,
                               plan.model_parallel.step_time_s, 1e-12}) * 1.15;
  const double left = 190, bar_w = kWidth - left - 10;
  const auto x_of = [&](double s) { return bar_w * s / top; };
  std::string body;
  const auto label = [&](double y, absl::string_view text) {
    absl::StrAppend(&body, Text(0, y + 17, text));
  };
  label(0, "this plan");
  absl::StrAppend(&body, Rect(left, 0, x_of(rest), 24, "#4e79a7",
                              absl::StrCat("compute ", base::HumanSeconds(rest))),
                  Rect(left + x_of(rest), 0, x_of(p.exposed_comm_s), 24, "#e15759",
                       absl::StrCat("exposed communication ", base::HumanSeconds(p.exposed_comm_s))),
                  Text(left + x_of(p.step_time_s) + 6, 17, base::HumanSeconds(p.step_time_s)));
  label(30, "  hidden comm");
  absl::StrAppend(&body, Rect(left, 30, x_of(hidden), 14, "#f1a7a9",
                              absl::StrCat("communication hidden behind backward ",
                                           base::HumanSeconds(hidden))),
                  Text(left + x_of(hidden) + 6, 42, base::HumanSeconds(hidden), "font-size=\"11\""));
  const auto baseline = [&](double y, const char* name, const BaselinePrediction& b) {
    label(y, name);
    absl::StrAppend(&body, Rect(left, y, x_of(b.step_time_s), 24, b.fits ? "#bab0ac" : "#d4a6c8",
                                absl::StrCat(name, " ", base::HumanSeconds(b.step_time_s))),
                    Text(left + x_of(b.step_time_s) + 6, y + 17,
                         absl::StrCat(base::HumanSeconds(b.step_time_s), b.fits ? "" : " (does not fit)")));
  };
  baseline(56, "all data_parallel", plan.data_parallel);
  baseline(86, "all model_parallel", plan.model_parallel);
  absl::StrAppend(&body, Text(left, 130, "seconds per training step (one device's view)",
                              "fill=\"#555\""));
  return Svg(138, "step time breakdown", body);
}

}  // namespace tessera::partitioner::internal
