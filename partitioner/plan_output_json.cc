// The plan-file JSON (DESIGN.md contract) and the Chrome trace of one step.
#include <utility>
#include <vector>

#include "tessera/base/chrome_trace.h"
#include "tessera/partitioner/plan_output.h"

namespace tessera::partitioner {
namespace {

using nlohmann::json;

// The chosen option's activation layouts: with two options of one strategy (model_parallel
// on the feature axis, or folded back to the batch) the strategy alone does not say which
// ran, and plan_file.h reads "output" back.
json LayoutsJson(const LayerPlan& l) {
  json inputs = json::array();
  for (size_t k = 0; k < l.input_layouts.size(); ++k) {
    const std::string tensor = k < l.input_tensor_names.size() ? l.input_tensor_names[k] : "";
    inputs.push_back(
        {{"tensor", tensor}, {"layout", std::string(LayoutName(l.input_layouts[k]))}});
  }
  return {{"output", std::string(LayoutName(l.output_layout))},
          {"inputs", std::move(inputs)},
          {"partial_dx", l.partial_dx}};
}

json LayerJson(const LayerPlan& l) {
  return {{"name", l.name},
          {"op", l.op},
          {"param_names", l.param_names},
          {"params", l.params},
          {"forward_flops", l.forward_flops},
          {"strategy", std::string(StrategyName(l.strategy))},
          {"reason", l.reason},
          {"comm_bytes", l.comm_bytes},
          {"compute_s", l.compute_s},
          {"comm_s", l.comm_s},
          {"memory_bytes", l.memory_bytes},
          {"layouts", LayoutsJson(l)}};
}

json BaselineJson(const BaselinePrediction& b, double planned_step_s) {
  json j = {{"step_time_s", b.step_time_s}, {"peak_bytes", b.peak_bytes}, {"fits", b.fits}};
  // How many times faster the chosen plan is than this baseline (null when undefined).
  j["speedup"] = planned_step_s > 0 && b.step_time_s > 0 ? json(b.step_time_s / planned_step_s)
                                                          : json(nullptr);
  return j;
}

json MemoryJson(const MemoryPrediction& m) {
  return {{"device_capacity_bytes", m.device_capacity_bytes},
          {"peak_bytes", m.peak_bytes},
          {"fits", m.fits},
          {"breakdown",
           {{"params_bytes", m.params_bytes},
            {"grads_bytes", m.grads_bytes},
            {"optimizer_bytes", m.optimizer_bytes},
            {"activation_bytes", m.activation_bytes},
            {"workspace_bytes", m.workspace_bytes},
            {"comm_buffer_bytes", m.comm_buffer_bytes}}},
          {"activations",
           {{"arena_bytes", m.activation_bytes},
            {"lower_bound_bytes", m.activation_lower_bound_bytes},
            {"no_reuse_bytes", m.activation_no_reuse_bytes}}}};
}

// The gradient buckets the runtime fuses the data-parallel gradients into (plan_file.h reads
// the sizes back).
json BucketsJson(const BucketSizes& b) {
  return {{"first_bucket_bytes", b.first_bytes},
          {"bucket_bytes", b.bytes},
          {"tuned", b.tuned},
          {"count", b.count}};
}

}  // namespace

json PlanToJson(const Plan& plan) {
  json layers = json::array();
  for (const LayerPlan& l : plan.layers) layers.push_back(LayerJson(l));
  const StepPrediction& p = plan.predicted;
  return {{"model",
           {{"name", plan.model_name},
            {"params", plan.model_params},
            {"forward_flops", plan.model_forward_flops},
            {"ops", plan.model_ops},
            {"batch", plan.batch}}},
          {"cluster",
           {{"name", plan.cluster_name}, {"devices", plan.devices}, {"nodes", plan.nodes}}},
          {"planner", plan.planner},
          {"layers", std::move(layers)},
          {"predicted",
           {{"step_time_s", p.step_time_s},
            {"compute_s", p.compute_s},
            {"comm_s", p.comm_s},
            {"exposed_comm_s", p.exposed_comm_s},
            {"gradient_wait_s", p.gradient_wait_s},
            {"samples_per_s", p.samples_per_s}}},
          {"memory", MemoryJson(plan.memory)},
          {"gradient_buckets", BucketsJson(plan.buckets)},
          {"baselines",
           {{"data_parallel", BaselineJson(plan.data_parallel, p.step_time_s)},
            {"model_parallel", BaselineJson(plan.model_parallel, p.step_time_s)}}}};
}

json PlanTrace(const Plan& plan) {
  // Devices are processes; lanes become thread ids in order of first appearance.
  std::vector<base::TraceSpan> spans;
  for (const TimelineEvent& e : plan.timeline) {
    spans.push_back({.name = e.name, .track = e.lane, .process = e.device,
                     .start_us = e.start_s * 1e6, .duration_us = e.duration_s * 1e6,
                     .args = {{"start_s", e.start_s}, {"duration_s", e.duration_s}}});
  }
  return base::ChromeTrace(spans, {.process_prefix = "device"},
                           {{"model", plan.model_name},
                            {"cluster", plan.cluster_name},
                            {"devices", plan.devices},
                            {"step_time_s", plan.predicted.step_time_s}});
}

}  // namespace tessera::partitioner
