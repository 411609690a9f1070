// Run reports (run_report.h).
#include "tessera/exec/run_report.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/base/text_format.h"

namespace tessera::exec {
namespace {

nlohmann::json TimesJson(const ReportTimes& t) {
  return {{"step_time_s", t.step_time_s}, {"compute_s", t.compute_s}, {"comm_s", t.comm_s},
          {"exposed_comm_s", t.exposed_comm_s}, {"gradient_wait_s", t.gradient_wait_s},
          {"input_wait_s", t.input_wait_s},
          {"comm_bytes", t.comm_bytes}};
}

std::string Percent(double measured, double predicted) {
  if (predicted <= 0) return "-";
  return absl::StrFormat("%+.1f%%", 100 * (measured - predicted) / predicted);
}

}  // namespace

bool RunReport::BytesMatchPlan() const {
  return measured_bytes_all_ranks == static_cast<int64_t>(workers) * predicted.comm_bytes;
}

RunReport MakeRunReport(const partitioner::Plan& plan, const WorkerResult& result,
                        absl::string_view backend) {
  const JobMeasure& job = result.job;
  RunReport r{.model = plan.model_name, .cluster = plan.cluster_name,
              .backend = std::string(backend), .workers = result.ranks,
              .global_batch = plan.batch, .steps = static_cast<int64_t>(result.steps.size()),
              .op_times = plan.measured_op_layers > 0 ? "measured" : "model"};
  r.predicted = {.step_time_s = plan.predicted.step_time_s,
                 .compute_s = plan.predicted.compute_s, .comm_s = plan.predicted.comm_s,
                 .exposed_comm_s = plan.predicted.exposed_comm_s,
                 .gradient_wait_s = plan.predicted.gradient_wait_s};
  const double exposed = job.blocked_s + job.finish_wait_s;
  r.measured_bytes_all_ranks = job.activation_bytes + job.gradient_bytes;
  r.measured = {.step_time_s = job.step_s, .compute_s = std::max(0.0, job.step_s - exposed),
                .comm_s = job.blocked_s + job.gradient_comm_s, .exposed_comm_s = exposed,
                .gradient_wait_s = job.finish_wait_s, .input_wait_s = job.input_wait_s,
                .comm_bytes = r.measured_bytes_all_ranks / std::max(1, r.workers)};
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const partitioner::LayerPlan& l = plan.layers[i];
    r.predicted.comm_bytes += l.comm_bytes;
    const int64_t measured = i < job.layer_bytes.size() ? job.layer_bytes[i] : 0;
    r.layers.push_back({.name = l.name, .op = l.op,
                        .strategy = std::string(partitioner::StrategyName(l.strategy)),
                        .planned_bytes = l.comm_bytes,
                        .measured_bytes = measured / std::max(1, r.workers),
                        .predicted_compute_s = l.compute_s, .predicted_comm_s = l.comm_s});
  }
  r.buckets = plan.buckets;
  r.measured_buckets = result.gradient_buckets;
  r.losses = result.losses;
  return r;
}

std::string RunReportTable(const RunReport& r) {
  std::string out = absl::StrFormat(
      "model %s, %d workers (%s back-end), global batch %d, %d steps; predicted on cluster %s%s"
      "\n\n",
      r.model, r.workers, r.backend, r.global_batch, r.steps, r.cluster,
      r.op_times == "measured" ? " with op times measured on this machine" : "");
  absl::StrAppendFormat(&out, "%-22s %14s %14s %9s\n", "per step", "predicted", "measured",
                        "error");
  const auto row = [&](const char* name, double p, double m) {
    absl::StrAppendFormat(&out, "%-22s %11.3f ms %11.3f ms %9s\n", name, p * 1e3, m * 1e3,
                          Percent(m, p));
  };
  row("step time", r.predicted.step_time_s, r.measured.step_time_s);
  row("compute", r.predicted.compute_s, r.measured.compute_s);
  row("communication", r.predicted.comm_s, r.measured.comm_s);
  row("exposed communication", r.predicted.exposed_comm_s, r.measured.exposed_comm_s);
  row("  waiting for gradients", r.predicted.gradient_wait_s, r.measured.gradient_wait_s);
  absl::StrAppendFormat(&out, "%-22s %14d %14d %9s\n", "bytes sent per device",
                        r.predicted.comm_bytes, r.measured.comm_bytes,
                        r.BytesMatchPlan() ? "exact" : "DIFFER");
  absl::StrAppendFormat(&out, "%-22s %14d %14d %9s\n", "gradient buckets", r.buckets.count,
                        r.measured_buckets, r.buckets.count == r.measured_buckets ? "" : "DIFFER");
  absl::StrAppendFormat(&out, "(buckets: the first up to %s, the others up to %s, %s)\n\n",
                        base::HumanBytes(r.buckets.first_bytes), base::HumanBytes(r.buckets.bytes),
                        r.buckets.tuned ? "chosen by the planner" : "as given");
  absl::StrAppendFormat(&out, "%-28s %-16s %-14s %14s %14s\n", "layer", "op", "strategy",
                        "planned bytes", "measured bytes");
  for (const ReportLayer& l : r.layers) {
    if (l.planned_bytes == 0 && l.measured_bytes == 0) continue;
    absl::StrAppendFormat(&out, "%-28s %-16s %-14s %14d %14d\n", l.name, l.op, l.strategy,
                          l.planned_bytes, l.measured_bytes);
  }
  absl::StrAppend(&out, "(layers that move nothing are not listed)\n");
  return out;
}

nlohmann::json RunReportJson(const RunReport& r) {
  nlohmann::json layers = nlohmann::json::array();
  for (const ReportLayer& l : r.layers) {
    layers.push_back({{"name", l.name}, {"op", l.op}, {"strategy", l.strategy},
                      {"predicted", {{"comm_bytes", l.planned_bytes},
                                     {"compute_s", l.predicted_compute_s},
                                     {"comm_s", l.predicted_comm_s}}},
                      {"measured", {{"comm_bytes", l.measured_bytes}}}});
  }
  return {{"model", r.model}, {"cluster", r.cluster}, {"backend", r.backend},
          {"workers", r.workers}, {"global_batch", r.global_batch}, {"steps", r.steps},
          {"op_times", r.op_times},
          {"predicted", TimesJson(r.predicted)}, {"measured", TimesJson(r.measured)},
          {"measured_bytes_all_ranks", r.measured_bytes_all_ranks},
          {"bytes_match_plan", r.BytesMatchPlan()},
          {"gradient_buckets", {{"first_bucket_bytes", r.buckets.first_bytes},
                                {"bucket_bytes", r.buckets.bytes},
                                {"tuned", r.buckets.tuned},
                                {"predicted_count", r.buckets.count},
                                {"measured_count", r.measured_buckets}}},
          {"layers", layers}, {"losses", r.losses}};
}

}  // namespace tessera::exec
