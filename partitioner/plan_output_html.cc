// The self-contained HTML report of `tessera plan --format html`: inline CSS and
// SVG, no scripts, no network; every piece of text from the plan and the cluster is
// escaped, every integer has thousands separators (base::WithThousands).
#include <algorithm>
#include <cctype>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/partitioner/plan_output.h"
#include "tessera/partitioner/plan_output_impl.h"

namespace tessera::partitioner {
namespace {

using internal::HtmlEscape;

std::string Card(absl::string_view value, absl::string_view label, absl::string_view cls = "") {
  return base::HtmlCard(value, label, cls);
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
      Card(base::WithThousands(std::llround(p.samples_per_s)), "samples per second"),
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
        HtmlEscape(l.op), "</td><td class=\"n\">", base::WithThousands(l.params),
        "</td><td class=\"s\"><i class=\"sw\" style=\"background:", internal::StrategyColor(s),
        "\"></i>", s,
        "</td><td class=\"n\">", base::HumanSeconds(l.compute_s), "</td><td class=\"n\">",
        base::HumanSeconds(l.comm_s), "</td><td>",
        absl::StrFormat("<i class=\"bar\" style=\"width:%.0fpx\"></i><i class=\"cbar\" "
                        "style=\"width:%.0fpx\"></i>",
                        120 * l.compute_s / longest, 120 * l.comm_s / longest),
        "</td><td class=\"n\">", base::HumanBytes(l.comm_bytes), "</td><td class=\"n\">",
        base::HumanBytes(l.memory_bytes), "</td><td>", HtmlEscape(l.reason), "</td></tr>\n");
  }
  return absl::StrCat(
      "<table><tr><th>#</th><th>layer</th><th>op</th><th>params</th><th>strategy</th>"
      "<th>compute</th><th>comm</th><th>time</th><th>bytes moved</th><th>memory</th>"
      "<th>why</th></tr>\n",
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

// The gradient buckets the runtime fuses the data-parallel gradients into.
std::string BucketsParagraph(const BucketSizes& b) {
  if (b.count == 0) return "";
  return absl::StrCat("<p>Gradient buckets: ", b.count, " per step, the first up to ",
                      base::HumanBytes(b.first_bytes), ", the others up to ",
                      base::HumanBytes(b.bytes),
                      b.tuned ? " (the fastest of the sizes the simulator tried)" : " (as given)",
                      ".</p>\n");
}

// Decimal prefixes with a space and a unit: "900 GB/s", "15.7 TFLOP/s".
std::string Rate(double value, absl::string_view unit) {
  std::string number = base::HumanCount(value);
  std::string prefix;
  if (!number.empty() && std::isalpha(static_cast<unsigned char>(number.back()))) {
    prefix = number.substr(number.size() - 1);
    number.pop_back();
  }
  return absl::StrCat(number, " ", prefix, unit);
}

std::string Dollars(double usd) {
  const int64_t cents = std::llround(usd * 100);
  return absl::StrFormat("$%s.%02d", base::WithThousands(cents / 100), cents % 100);
}

std::string Link(const costmodel::LinkSpec& link) {
  return absl::StrCat(Rate(link.bandwidth, "B/s"), ", ", base::HumanSeconds(link.latency),
                      " latency per message");
}

// The figures of the cluster the plan was made for, one row each.
std::string ClusterTable(const Plan& plan, const costmodel::ClusterSpec& c) {
  const costmodel::DeviceSpec& d = c.device;
  std::vector<std::pair<std::string, std::string>> rows = {
      {"cluster", c.name},
      {"devices", absl::StrCat(base::WithThousands(plan.devices), " on ",
                               base::WithThousands(plan.nodes),
                               plan.nodes == 1 ? " node (" : " nodes (",
                               base::WithThousands(c.devices_per_node), " per node)")},
      {"device", d.name},
      {"peak FLOP/s",
       absl::StrCat(Rate(d.peak_flops_f32, "FLOP/s"), " f32, ", Rate(d.peak_flops_f16, "FLOP/s"),
                    " f16",
                    d.peak_flops_bf16 > 0
                        ? absl::StrCat(", ", Rate(d.peak_flops_bf16, "FLOP/s"), " bf16")
                        : "")},
      {"memory per device", absl::StrCat(base::HumanBytes(d.memory_bytes), " (",
                                         base::WithThousands(d.memory_bytes), " bytes)")},
      {"memory bandwidth", Rate(d.memory_bandwidth, "B/s")},
      {"intra-node link", absl::StrCat(Link(c.intra_node), " (per device)")},
      {"inter-node link", absl::StrCat(Link(c.inter_node), plan.nodes > 1 ? " (per node)"
                                                                          : " (unused: one node)")},
      {"efficiency", c.efficiency ? "measured fractions of peak (tessera calibrate)"
                                  : "the cost model's default fractions of peak"}};
  if (c.price_per_device_hour > 0) {
    rows.emplace_back("price", absl::StrCat(Dollars(c.price_per_device_hour), " per device-hour, ",
                                            Dollars(c.price_per_device_hour * plan.devices),
                                            " per hour for ", base::WithThousands(plan.devices),
                                            plan.devices == 1 ? " device" : " devices"));
  }
  if (!c.source.empty()) rows.emplace_back("figures from", c.source);
  std::string text = "<table class=\"kv\">\n";
  for (const auto& [key, value] : rows) {
    absl::StrAppend(&text, "<tr><th>", key, "</th><td>", HtmlEscape(value), "</td></tr>\n");
  }
  return text + "</table>\n";
}

std::string Percent(int64_t part, int64_t whole) {
  return whole > 0 ? absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(part) /
                                                   static_cast<double>(whole))
                   : "-";
}

// The memory chart's legend with exact figures: one row per stacked component, then the
// largest peak and the capacity.
std::string MemoryTable(const MemoryPrediction& m) {
  int64_t peak = 0;
  for (int64_t b : m.peak_bytes) peak = std::max(peak, b);
  const auto row = [&](absl::string_view swatch, absl::string_view name, int64_t bytes,
                       absl::string_view share) {
    return absl::StrCat("<tr><td>", swatch, HtmlEscape(name), "</td><td class=\"n\">",
                        base::WithThousands(bytes), "</td><td class=\"n\">",
                        base::HumanBytes(bytes), "</td><td class=\"n\">", share, "</td></tr>\n");
  };
  std::string text =
      "<table class=\"mem\"><tr><th>per device</th><th>bytes</th><th>size</th>"
      "<th>share</th></tr>\n";
  for (const internal::MemoryComponent& c : internal::MemoryComponents(m)) {
    absl::StrAppend(&text, row(absl::StrCat("<i class=\"sw\" style=\"background:", c.color,
                                            "\"></i>"),
                               c.name, c.bytes,
                               absl::StrCat(Percent(c.bytes, peak), " of the peak")));
  }
  absl::StrAppend(&text,
                  row("", "peak (largest device)", peak,
                      absl::StrCat(Percent(peak, m.device_capacity_bytes), " of the capacity")),
                  row("", m.fits ? "capacity (fits)" : "capacity (does not fit)",
                      m.device_capacity_bytes, ""),
                  "</table>\n");
  return text;
}

}  // namespace

std::string PlanHtml(const Plan& plan, const costmodel::ClusterSpec& cluster) {
  const std::string title =
      absl::StrCat("Tessera plan: ", plan.model_name, " on ", plan.cluster_name, ", ",
                   base::WithThousands(plan.devices), plan.devices == 1 ? " device" : " devices");
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>",
      HtmlEscape(title), "</title>\n<style>", base::ReportCss(), "</style></head><body>\n<h1>",
      HtmlEscape(title), "</h1>\n<div class=\"sub\">", base::WithThousands(plan.nodes),
      " node(s), global batch ", base::WithThousands(plan.batch), ", ",
      base::WithThousands(plan.model_params), " parameters, planner ", HtmlEscape(plan.planner),
      "</div>\n", Cards(plan), "<h2>Cluster</h2>\n", ClusterTable(plan, cluster),
      "<h2>Step time</h2>\n", internal::StepTimeSvg(plan),
      "<p class=\"legend\"><span><i class=\"sw\" style=\"background:#4e79a7\"></i>compute</span>"
      "<span><i class=\"sw\" style=\"background:#e15759\"></i>exposed communication</span>"
      "<span><i class=\"sw\" style=\"background:#f1a7a9\"></i>communication hidden behind "
      "backward</span></p>\n",
      BaselineTable(plan), BucketsParagraph(plan.buckets), "<h2>Strategy per layer</h2>\n",
      Legend(),
      internal::StrategyStripSvg(plan), "<h2>Memory per device</h2>\n", internal::MemorySvg(plan),
      MemoryTable(plan.memory), "<h2>Layers</h2>\n", LayerTable(plan),
      "<p class=\"sub\">Generated by tessera plan. Times are predictions of the cost model for "
      "one training step.</p>\n</body></html>\n");
}

}  // namespace tessera::partitioner
