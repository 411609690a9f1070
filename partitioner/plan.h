// A partition plan: per layer a strategy, with predicted time, bytes moved and
// memory, and the whole step's prediction. Produced by PlanModel
// (partitioner/planner.h); written by partitioner/plan_output.h in the formats of
// `tessera plan` (the JSON fields are the plan-file contract of DESIGN.md).
//
//   for (const LayerPlan& l : plan.layers)
//     std::cout << l.name << " " << StrategyName(l.strategy) << " " << l.reason << "\n";
//   plan.predicted.step_time_s;  plan.memory.fits;
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tessera/graph/graph.h"
#include "tessera/partitioner/layout.h"

namespace tessera::partitioner {

enum class Strategy : uint8_t {
  kDataParallel,   // batch split, weights replicated, gradients all-reduced
  kModelParallel,  // weights split over devices along output features
  kLateMultiply,   // batch split; X and dY all-gathered in backward, dW formed locally
  kReplicated,     // every device computes the whole op (parameterless ops on replicated data)
};
absl::string_view StrategyName(Strategy s);  // "data_parallel", ..., "replicated"
absl::StatusOr<Strategy> ParseStrategy(absl::string_view name);

struct LayerPlan {
  graph::NodeId node = graph::kNoNode;
  std::string name;
  std::string op;                        // graph::OpName
  std::vector<std::string> param_names;  // graph names of the parameters it uses
  int64_t params = 0;
  double forward_flops = 0;              // whole global batch
  Strategy strategy = Strategy::kDataParallel;
  std::string reason;                    // one line: why this strategy
  int64_t comm_bytes = 0;                // bytes one device sends per step for this layer
  double compute_s = 0;                  // forward + backward on one device
  double comm_s = 0;                     // its collectives (gradient sync + activations)
  int64_t memory_bytes = 0;              // params + grads + optimizer + kept activations, per device
  // Activation layouts of the chosen option: with two options of one strategy (model_parallel
  // leaving its output on the feature axis, or folded back to the batch), the strategy alone
  // does not say which ran; the plan file records these so it reads back unambiguously.
  Layout output_layout = Layout::kBatch;        // the layout its output is left in
  std::vector<graph::TensorId> input_tensors;    // its activation inputs (Layer::inputs order)
  std::vector<std::string> input_tensor_names;  // their graph names (the JSON names tensors so)
  std::vector<Layout> input_layouts;            // the layout it reads each of them in
  bool partial_dx = false;                      // its inputs' gradients are partial sums
};

// One span of the predicted step timeline (for --trace): on `lane` ("compute",
// "comm") of device `device`, from start_s for duration_s.
struct TimelineEvent {
  std::string name;
  std::string lane;
  int device = 0;
  double start_s = 0;
  double duration_s = 0;
};

struct StepPrediction {
  double step_time_s = 0;
  double compute_s = 0;       // forward + backward + optimizer, one device
  double comm_s = 0;          // every collective, hidden or not
  double exposed_comm_s = 0;  // the part of comm_s not hidden behind compute
  // The part of exposed_comm_s after backward: waiting for the gradient channel (the buckets and
  // single gradient collectives) and copying the fused buckets back. The rest is blocking.
  double gradient_wait_s = 0;
  double samples_per_s = 0;
};

struct MemoryPrediction {
  int64_t device_capacity_bytes = 0;
  std::vector<int64_t> peak_bytes;  // per device
  bool fits = false;
  // Breakdown of the largest device's peak.
  // activation_bytes: the transient arena (activations, their gradients, saved state) planned
  // from the step's lifetimes; workspace_bytes: kernel scratch outside it (0 so far).
  int64_t params_bytes = 0, grads_bytes = 0, optimizer_bytes = 0, activation_bytes = 0,
          workspace_bytes = 0, comm_buffer_bytes = 0;
  int64_t activation_lower_bound_bytes = 0;  // most transient bytes live at once
  int64_t activation_no_reuse_bytes = 0;     // every transient value in its own buffer
};

// Gradient fusion: the data-parallel gradients are all-reduced in buckets while backward runs
// (comm/gradient_buckets.h). Bucket 0, the first to be ready, holds up to first_bytes so that
// communication starts early; the others hold up to `bytes`. The defaults are what a plan is
// priced with before PlanModel tunes them (bucket_tuning.h) and what a plan without sizes uses.
struct BucketSizes {
  int64_t first_bytes = 1 << 20;
  int64_t bytes = 25 << 20;
  bool tuned = false;  // PlanModel chose them (else PlanOptions gave them)
  int count = 0;       // buckets per step in the plan's simulation (0: no bucketed gradient)
};

struct BaselinePrediction {
  double step_time_s = 0;
  int64_t peak_bytes = 0;
  bool fits = false;
};

struct Plan {
  // Model summary (the "model" object of the contract).
  std::string model_name;
  int64_t model_params = 0;
  double model_forward_flops = 0;
  int model_ops = 0;
  int64_t batch = 0;  // global
  // Cluster (the "cluster" object).
  std::string cluster_name;
  int devices = 0;
  int nodes = 0;
  std::string planner;  // "heuristic", "optimal", "data", "model"
  std::vector<LayerPlan> layers;
  StepPrediction predicted;
  MemoryPrediction memory;
  BucketSizes buckets;  // the runtime's gradient buckets (exec/hybrid_worker.h)
  BaselinePrediction data_parallel;
  BaselinePrediction model_parallel;
  std::vector<TimelineEvent> timeline;
  // Layers priced with op times measured on the device (costmodel::MeasuredCostModel) instead
  // of the cluster's roofline, as the caller that chose the cost model counts them; not part of
  // the plan-file contract.
  int measured_op_layers = 0;
};

}  // namespace tessera::partitioner
