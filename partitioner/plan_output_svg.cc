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
  return base::SvgText(x, y, text, extra);
}

std::string Svg(double height, absl::string_view label, const std::string& body) {
  return base::SvgRoot(kWidth, height, label, body);
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

std::vector<MemoryComponent> MemoryComponents(const MemoryPrediction& m) {
  std::vector<MemoryComponent> parts = {{"parameters", "#4e79a7", m.params_bytes},
                                        {"gradients", "#f28e2b", m.grads_bytes},
                                        {"optimizer state", "#b07aa1", m.optimizer_bytes},
                                        {"activations", "#59a14f", m.activation_bytes}};
  if (m.workspace_bytes != 0) parts.push_back({"workspace", "#edc948", m.workspace_bytes});
  if (m.comm_buffer_bytes != 0) {
    parts.push_back({"gradient-bucket buffers", "#76b7b2", m.comm_buffer_bytes});
  }
  return parts;
}

namespace {

constexpr const char* kNoBreakdownColor = "#bab0ac";

// Consecutive devices with the same peak, drawn as one bar ("devices 0-511").
struct DeviceRun {
  size_t first = 0, last = 0;
  int64_t peak = 0;
  std::string Label() const {
    return first == last ? absl::StrCat("device ", first)
                         : absl::StrCat("devices ", first, "-", last);
  }
};

std::vector<DeviceRun> DeviceRuns(const std::vector<int64_t>& peak_bytes) {
  std::vector<DeviceRun> runs;
  for (size_t d = 0; d < peak_bytes.size(); ++d) {
    if (!runs.empty() && runs.back().peak == peak_bytes[d]) {
      runs.back().last = d;
    } else {
      runs.push_back({d, d, peak_bytes[d]});
    }
  }
  return runs;
}

std::string ExactBytes(int64_t bytes) {
  return absl::StrCat(base::WithThousands(bytes), " B (", base::HumanBytes(bytes), ")");
}

// Geometry of the memory chart: rows of stacked bars from x = kLeft, kBarWidth wide at `top`.
constexpr double kLeft = 120, kBarWidth = 700, kRowsTop = 24, kRowsHeight = 224;

// One run's bar: the breakdown's segments when the run's peak is the breakdown's total (the
// breakdown is of the largest device), else one grey segment of its peak.
std::string RunBar(const DeviceRun& run, const std::vector<MemoryComponent>& parts,
                   int64_t breakdown_total, double top, double y, double h) {
  const std::string label = run.Label();
  std::string body;
  double x = kLeft;
  if (run.peak == breakdown_total) {
    for (const MemoryComponent& c : parts) {
      if (c.bytes <= 0) continue;
      const double w = kBarWidth * static_cast<double>(c.bytes) / top;
      absl::StrAppend(&body, Rect(x, y, w, h, c.color,
                                  absl::StrCat(label, ": ", c.name, " ", ExactBytes(c.bytes))));
      x += w;
    }
  } else {
    absl::StrAppend(&body, Rect(x, y, kBarWidth * static_cast<double>(run.peak) / top, h,
                                kNoBreakdownColor,
                                absl::StrCat(label, ": peak ", ExactBytes(run.peak),
                                             ", breakdown not recorded")));
  }
  return body;
}

// The gridlines' spacing: a round number of KiB, MiB, GiB, ... giving at most 6 steps to `top`.
double GridStep(double top) {
  double unit = 1;
  while (unit * 1024 <= top) unit *= 1024;
  for (double step : {0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0, 10.0, 20.0, 25.0, 50.0, 100.0,
                      200.0, 250.0, 500.0}) {
    if (step * unit >= 1 && top / (step * unit) <= 6) return step * unit;
  }
  return 1024 * unit;
}

// Vertical gridlines at round byte values with their values under the rows.
std::string MemoryAxis(double top, double rows_bottom) {
  std::string body;
  const double step = GridStep(top);
  for (int k = 0; k * step <= top; ++k) {
    const double v = k * step, x = kLeft + kBarWidth * v / top;
    absl::StrAppend(&body,
                    absl::StrFormat("<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.2f\" "
                                    "stroke=\"#ddd\"/>\n", x, kRowsTop - 4, x, rows_bottom),
                    Text(x, rows_bottom + 14, base::HumanBytes(v),
                         "fill=\"#555\" text-anchor=\"middle\""));
  }
  return body;
}

std::string MemoryLegend(const std::vector<MemoryComponent>& parts, bool no_breakdown, double y) {
  std::string body;
  double x = 0;
  const auto entry = [&](absl::string_view name, absl::string_view color) {
    absl::StrAppend(&body, Rect(x, y - 10, 12, 12, color, name), Text(x + 16, y, name));
    x += 30 + 7.0 * static_cast<double>(name.size());
  };
  for (const MemoryComponent& c : parts) entry(c.name, c.color);
  if (no_breakdown) entry("peak, breakdown not recorded", kNoBreakdownColor);
  return body;
}

}  // namespace

std::string MemorySvg(const Plan& plan) {
  const MemoryPrediction& m = plan.memory;
  if (m.peak_bytes.empty()) return Svg(30, "no memory data", Text(0, 20, "(no per-device memory)"));
  const std::vector<MemoryComponent> parts = MemoryComponents(m);
  int64_t total = 0;
  for (const MemoryComponent& c : parts) total += c.bytes;
  const std::vector<DeviceRun> runs = DeviceRuns(m.peak_bytes);
  const int64_t peak = *std::max_element(m.peak_bytes.begin(), m.peak_bytes.end());
  const double top = 1.04 * std::max({static_cast<double>(peak),
                                      static_cast<double>(m.device_capacity_bytes), 1.0});
  const double n = static_cast<double>(runs.size());
  const double row = runs.size() <= 8 ? 36 : kRowsHeight / n;  // bar plus gap
  const double rows_bottom = kRowsTop + row * n;
  std::string body = MemoryAxis(top, rows_bottom);  // gridlines under the bars
  bool no_breakdown = false;
  for (size_t r = 0; r < runs.size(); ++r) {
    const DeviceRun& run = runs[r];
    const double y = kRowsTop + row * static_cast<double>(r), h = row * 0.75;
    no_breakdown |= run.peak != total;
    absl::StrAppend(&body, RunBar(run, parts, total, top, y, h));
    if (h < 10) continue;  // too many bars to label each; their titles still name them
    const bool over = run.peak > m.device_capacity_bytes;
    absl::StrAppend(&body, Text(0, y + h / 2 + 4, run.Label()),
                    Text(kLeft + kBarWidth * static_cast<double>(run.peak) / top + 6, y + h / 2 + 4,
                         absl::StrCat(base::HumanBytes(run.peak), over ? " over capacity" : ""),
                         over ? "fill=\"#c00\"" : ""));
  }
  const double cap_x = kLeft + kBarWidth * static_cast<double>(m.device_capacity_bytes) / top;
  const bool cap_right = cap_x > kLeft + kBarWidth / 2;
  absl::StrAppend(
      &body,
      absl::StrFormat("<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#c00\" "
                      "stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n",
                      cap_x, kRowsTop - 8, cap_x, rows_bottom),
      Text(cap_x + (cap_right ? -4 : 4), kRowsTop - 12,
           absl::StrCat("capacity ", base::HumanBytes(m.device_capacity_bytes)),
           cap_right ? "fill=\"#c00\" text-anchor=\"end\"" : "fill=\"#c00\""),
      MemoryLegend(parts, no_breakdown, rows_bottom + 40),
      Text(0, rows_bottom + 62,
           "bytes per device at the step's peak; consecutive devices with equal peaks share "
           "one bar",
           "fill=\"#555\""));
  return Svg(rows_bottom + 70, "memory per device", body);
}

std::string StepTimeSvg(const Plan& plan) {
  const StepPrediction& p = plan.predicted;
  const double hidden = std::max(p.comm_s - p.exposed_comm_s, 0.0);
  const double rest = std::max(p.step_time_s - p.exposed_comm_s, 0.0);  // compute on the critical path
  const double top = std::max({p.step_time_s, rest + hidden, plan.data_parallel.step_time_s,
                               plan.model_parallel.step_time_s, 1e-12}) * 1.3;  // room for labels
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
