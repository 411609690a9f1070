// The readable table of `tessera plan` (the default format).
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tessera/partitioner/plan_output.h"
#include "tessera/partitioner/plan_output_impl.h"

namespace tessera::partitioner {
namespace {

constexpr size_t kNameWidth = 40;

std::string LayerRows(const Plan& plan) {
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const LayerPlan& l = plan.layers[i];
    rows.push_back({absl::StrCat(i), base::Elide(l.name, kNameWidth), l.op,
                    std::string(StrategyName(l.strategy)), base::HumanSeconds(l.compute_s),
                    l.comm_s > 0 ? base::HumanSeconds(l.comm_s) : "-",
                    l.comm_bytes > 0 ? base::HumanBytes(l.comm_bytes) : "-",
                    l.memory_bytes > 0 ? base::HumanBytes(l.memory_bytes) : "-", l.reason});
  }
  return base::RenderTable(
      {"#", "layer", "op", "strategy", "compute", "comm", "bytes moved", "memory", "why"},
      {true, false, false, false, true, true, true, true, false}, rows);
}

std::string Percent(double part, double whole) {
  return whole > 0 ? absl::StrFormat("%.0f%%", 100 * part / whole) : "-";
}

std::string BucketLine(const BucketSizes& b) {
  if (b.count == 0) return "";
  return absl::StrCat("  buckets         ", b.count,
                      b.count == 1 ? " gradient bucket" : " gradient buckets",
                      " per step, the first up to ", base::HumanBytes(b.first_bytes),
                      ", the others up to ", base::HumanBytes(b.bytes),
                      b.tuned ? " (the simulator's fastest)" : " (as given)", "\n");
}

std::string PredictionLines(const Plan& plan) {
  const StepPrediction& p = plan.predicted;
  return absl::StrCat(
      "predicted step    ", base::HumanSeconds(p.step_time_s), ", ",
      base::WithThousands(std::llround(p.samples_per_s)), " samples/s\n",
      "  compute         ", base::HumanSeconds(p.compute_s), " (forward + backward + optimizer)\n",
      "  communication   ", base::HumanSeconds(p.comm_s), ", of which exposed ",
      base::HumanSeconds(p.exposed_comm_s), " (", Percent(p.exposed_comm_s, p.step_time_s),
      " of the step); the rest hidden behind backward\n", BucketLine(plan.buckets));
}

std::string MemoryLines(const MemoryPrediction& m) {
  std::string text = absl::StrCat("memory per device (capacity ", base::HumanBytes(m.device_capacity_bytes),
                                  "): ", m.fits ? "fits" : "DOES NOT FIT", "\n");
  if (!m.peak_bytes.empty()) {
    const auto lo = std::min_element(m.peak_bytes.begin(), m.peak_bytes.end());
    const auto hi = std::max_element(m.peak_bytes.begin(), m.peak_bytes.end());
    if (m.peak_bytes.size() <= 16) {
      std::vector<std::string> per;
      for (size_t d = 0; d < m.peak_bytes.size(); ++d) {
        per.push_back(absl::StrCat(d, ": ", base::HumanBytes(m.peak_bytes[d])));
      }
      absl::StrAppend(&text, "  peak            ", absl::StrJoin(per, ", "), "\n");
    } else if (*lo == *hi) {
      absl::StrAppend(&text, "  peak            ", base::HumanBytes(*hi), " on each of ",
                      base::WithThousands(static_cast<int64_t>(m.peak_bytes.size())), " devices\n");
    } else {
      absl::StrAppend(&text, "  peak            ", base::HumanBytes(*lo), " to ", base::HumanBytes(*hi),
                      " over ", base::WithThousands(static_cast<int64_t>(m.peak_bytes.size())),
                      " devices (largest: device ",
                      hi - m.peak_bytes.begin(), ")\n");
    }
    absl::StrAppend(&text, "  largest peak    ", Percent(*hi, m.device_capacity_bytes),
                    " of capacity\n");
  }
  absl::StrAppend(&text, "  breakdown       params ", base::HumanBytes(m.params_bytes), ", grads ",
                  base::HumanBytes(m.grads_bytes), ", optimizer ", base::HumanBytes(m.optimizer_bytes),
                  ", activations ", base::HumanBytes(m.activation_bytes), ", workspace ",
                  base::HumanBytes(m.workspace_bytes), ", comm buffers ",
                  base::HumanBytes(m.comm_buffer_bytes), "\n");
  return text;
}

std::string BaselineLines(const Plan& plan) {
  std::vector<std::vector<std::string>> rows;
  const double step = plan.predicted.step_time_s;
  const auto row = [&](const char* name, const BaselinePrediction& b) {
    rows.push_back({name, base::HumanSeconds(b.step_time_s), base::HumanBytes(b.peak_bytes),
                    b.fits ? "yes" : "no",
                    step > 0 && b.step_time_s > 0 ? absl::StrFormat("%.2fx", b.step_time_s / step)
                                                  : "-"});
  };
  rows.push_back({absl::StrCat("this plan (", plan.planner, ")"), base::HumanSeconds(step),
                  plan.memory.peak_bytes.empty()
                      ? "-"
                      : base::HumanBytes(*std::max_element(plan.memory.peak_bytes.begin(),
                                                      plan.memory.peak_bytes.end())),
                  plan.memory.fits ? "yes" : "no", "1.00x"});
  row("all data_parallel", plan.data_parallel);
  row("all model_parallel", plan.model_parallel);
  return base::RenderTable({"baseline", "step time", "peak memory", "fits", "plan speed-up"},
                               {false, true, true, false, true}, rows);
}

}  // namespace

std::string PlanTable(const Plan& plan) {
  std::string text = absl::StrCat(
      "plan for ", plan.model_name, " on ", plan.cluster_name, ": ",
      base::WithThousands(plan.devices), " device", plan.devices == 1 ? "" : "s", " (",
      base::WithThousands(plan.nodes), " node", plan.nodes == 1 ? "" : "s", "), global batch ",
      base::WithThousands(plan.batch), ", planner ", plan.planner, "\n\n");
  absl::StrAppend(&text, LayerRows(plan), "\n", PredictionLines(plan), "\n",
                  MemoryLines(plan.memory), "\n", BaselineLines(plan));
  return text;
}

}  // namespace tessera::partitioner
