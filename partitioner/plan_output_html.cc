// The self-contained HTML report of `tessera plan --format html`: inline CSS and
// SVG, no scripts, no network; every piece of text from the plan is escaped.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/partitioner/plan_output.h"
#include "tessera/partitioner/plan_output_impl.h"

namespace tessera::partitioner {
namespace {

using internal::HtmlEscape;

constexpr const char* kCss = R"css(
body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.sub{color:#555;margin-bottom:16px}
.cards{display:flex;gap:12px;flex-wrap:wrap}
.card{border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:150px}
.card b{display:block;font-size:20px}.card span{color:#555;font-size:12px}
.bad{color:#c00}.good{color:#2a7}
table{border-collapse:collapse;font-size:12px;width:100%}
th,td{border-bottom:1px solid #eee;padding:3px 6px;text-align:left;vertical-align:top}
td.n{text-align:right;white-space:nowrap}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:4px;vertical-align:middle}
.legend span{margin-right:14px}
.bar{height:8px;background:#4e79a7;display:inline-block}.cbar{height:8px;background:#e15759;display:inline-block}
)css";

std::string Card(absl::string_view value, absl::string_view label, absl::string_view cls = "") {
  return absl::StrCat("<div class=\"card\"><b class=\"", cls, "\">", HtmlEscape(value),
                      "</b><span>", HtmlEscape(label), "</span></div>\n");
}

std::string Speedup(double baseline_s, double step_s) {
  return step_s > 0 && baseline_s > 0 ? absl::StrFormat("%.2fx", baseline_s / step_s) : "-";
}

std::string Cards(const Plan& plan) {
  const StepPrediction& p = plan.predicted;
  int64_t peak = 0;
  for (int64_t b : plan.memory.peak_bytes) peak = std::max(peak, b);
  return absl::StrCat(
      "<div class=\"cards\">\n", Card(base::HumanSeconds(p.step_time_s), "predicted step time"),
      Card(absl::StrFormat("%.0f", p.samples_per_s), "samples per second"),
      Card(base::HumanSeconds(p.exposed_comm_s), "exposed communication"),
      Card(absl::StrCat(base::HumanBytes(peak), plan.memory.fits ? " fits" : " does not fit"),
           absl::StrCat("peak memory of ", base::HumanBytes(plan.memory.device_capacity_bytes)),
           plan.memory.fits ? "good" : "bad"),
      Card(Speedup(plan.data_parallel.step_time_s, p.step_time_s), "speed-up over data_parallel"),
      Card(Speedup(plan.model_parallel.step_time_s, p.step_time_s), "speed-up over model_parallel"),
      "</div>\n");
}

std::string Legend() {
  std::string text = "<p class=\"legend\">";
  for (const char* s : {"data_parallel", "model_parallel", "late_multiply", "replicated"}) {
    absl::StrAppend(&text, "<span><i class=\"sw\" style=\"background:", internal::StrategyColor(s),
                    "\"></i>", s, "</span>");
  }
  return text + "</p>\n";
}

std::string LayerTable(const Plan& plan) {
  double longest = 1e-12;
  for (const LayerPlan& l : plan.layers) longest = std::max(longest, l.compute_s + l.comm_s);
  std::string rows;
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const LayerPlan& l = plan.layers[i];
    const std::string s(StrategyName(l.strategy));
    absl::StrAppend(
        &rows, "<tr><td class=\"n\">", i, "</td><td>", HtmlEscape(l.name), "</td><td>",
        HtmlEscape(l.op), "</td><td><i class=\"sw\" style=\"background:", internal::StrategyColor(s),
        "\"></i>", s, "</td><td class=\"n\">", base::HumanSeconds(l.compute_s), "</td><td class=\"n\">",
        base::HumanSeconds(l.comm_s), "</td><td>",
        absl::StrFormat("<i class=\"bar\" style=\"width:%.0fpx\"></i><i class=\"cbar\" "
                        "style=\"width:%.0fpx\"></i>",
                        120 * l.compute_s / longest, 120 * l.comm_s / longest),
        "</td><td class=\"n\">", base::HumanBytes(l.comm_bytes), "</td><td class=\"n\">",
        base::HumanBytes(l.memory_bytes), "</td><td>", HtmlEscape(l.reason), "</td></tr>\n");
  }
  return absl::StrCat(
      "<table><tr><th>#</th><th>layer</th><th>op</th><th>strategy</th><th>compute</th>"
      "<th>comm</th><th>time</th><th>bytes moved</th><th>memory</th><th>why</th></tr>\n",
      rows, "</table>\n");
}

std::string BaselineTable(const Plan& plan) {
  const double step = plan.predicted.step_time_s;
  const auto row = [&](absl::string_view name, double t, int64_t peak, bool fits) {
    return absl::StrCat("<tr><td>", HtmlEscape(name), "</td><td class=\"n\">", base::HumanSeconds(t),
                        "</td><td class=\"n\">", base::HumanBytes(peak), "</td><td class=\"",
                        fits ? "good\">yes" : "bad\">no", "</td><td class=\"n\">",
                        Speedup(t, step), "</td></tr>\n");
  };
  int64_t peak = 0;
  for (int64_t b : plan.memory.peak_bytes) peak = std::max(peak, b);
  return absl::StrCat(
      "<table><tr><th>plan</th><th>step time</th><th>peak memory</th><th>fits</th>"
      "<th>this plan's speed-up</th></tr>\n",
      row(absl::StrCat("this plan (", plan.planner, ")"), step, peak, plan.memory.fits),
      row("all data_parallel", plan.data_parallel.step_time_s, plan.data_parallel.peak_bytes,
          plan.data_parallel.fits),
      row("all model_parallel", plan.model_parallel.step_time_s, plan.model_parallel.peak_bytes,
          plan.model_parallel.fits),
      "</table>\n");
}

}  // namespace

std::string PlanHtml(const Plan& plan) {
  const std::string title = absl::StrCat("Tessera plan: ", plan.model_name, " on ",
                                         plan.cluster_name, ", ", plan.devices, " devices");
  const MemoryPrediction& m = plan.memory;
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>",
      HtmlEscape(title), "</title>\n<style>", kCss, "</style></head><body>\n<h1>",
      HtmlEscape(title), "</h1>\n<div class=\"sub\">", plan.nodes, " node(s), global batch ",
      plan.batch, ", ", base::HumanCount(static_cast<double>(plan.model_params)), " parameters, planner ", HtmlEscape(plan.planner),
      "</div>\n", Cards(plan), "<h2>Step time</h2>\n", internal::StepTimeSvg(plan),
      "<p class=\"legend\"><span><i class=\"sw\" style=\"background:#4e79a7\"></i>compute</span>"
      "<span><i class=\"sw\" style=\"background:#e15759\"></i>exposed communication</span>"
      "<span><i class=\"sw\" style=\"background:#f1a7a9\"></i>communication hidden behind "
      "backward</span></p>\n",
      BaselineTable(plan), "<h2>Strategy per layer</h2>\n", Legend(),
      internal::StrategyStripSvg(plan), "<h2>Memory per device</h2>\n",
      "<p>params ", base::HumanBytes(m.params_bytes), ", grads ", base::HumanBytes(m.grads_bytes),
      ", optimizer ", base::HumanBytes(m.optimizer_bytes), ", activations ",
      base::HumanBytes(m.activation_bytes), ", workspace ", base::HumanBytes(m.workspace_bytes),
      ", comm buffers ", base::HumanBytes(m.comm_buffer_bytes), " (largest device)</p>\n",
      internal::MemorySvg(plan), "<h2>Layers</h2>\n", LayerTable(plan),
      "<p class=\"sub\">Generated by tessera plan. Times are predictions of the cost model for "
      "one training step.</p>\n</body></html>\n");
}

}  // namespace tessera::partitioner
