// PlanModel: validate, build the problem, plan, shard to fit, fill the Plan.
#include "tessera/partitioner/planner.h"

#include <cmath>
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/base/setting_error.h"
#include "tessera/base/status_macros.h"
#include "tessera/base/text_format.h"
#include "tessera/costmodel/op_estimate.h"
#include "tessera/graph/batch.h"
#include "tessera/graph/parameters.h"
#include "tessera/memory/offset_planner.h"
#include "tessera/partitioner/activation_memory.h"
#include "tessera/partitioner/bucket_tuning.h"
#include "tessera/partitioner/exact_planner.h"
#include "tessera/partitioner/heuristic_planner.h"
#include "tessera/partitioner/layer_options.h"
#include "tessera/partitioner/layer_reasons.h"
#include "tessera/partitioner/memory_sharding.h"
#include "tessera/partitioner/polish.h"
#include "tessera/partitioner/simulate.h"

namespace tessera::partitioner {
namespace {

constexpr int kMaxDevices = 65536;

// The bucket sizes the layers are chosen with: the given ones, else BucketSizes' defaults
// (tuned for the chosen plan afterwards).
BucketSizes PlanningBuckets(const PlanOptions& options) {
  BucketSizes sizes;
  if (options.first_bucket_bytes > 0) sizes.first_bytes = options.first_bucket_bytes;
  if (options.bucket_bytes > 0) sizes.bytes = options.bucket_bytes;
  return sizes;
}

bool TunesBuckets(const PlanOptions& options) {
  return options.bucket_bytes == 0 || options.first_bucket_bytes == 0;
}

// The sizes `choice` runs with: as given, or the fastest in the simulator over the candidate
// grid (a given size fixed); the planning sizes when no gradient is bucketed. `count` is set
// either way.
BucketSizes ChooseBuckets(const Problem& problem, const Choice& choice, int64_t capacity,
                          const PlanOptions& options) {
  BucketSizes sizes = problem.options.buckets;
  if (TunesBuckets(options) && !FormBuckets(problem, choice).empty()) {
    BucketCandidates grid = DefaultBucketCandidates();
    if (options.bucket_bytes > 0) grid.bytes = {options.bucket_bytes};
    if (options.first_bucket_bytes > 0) grid.first_bytes = {options.first_bucket_bytes};
    return TuneBuckets(problem, choice, capacity, grid);
  }
  sizes.tuned = TunesBuckets(options);
  sizes.count = static_cast<int>(FormBuckets(problem, choice).size());
  return sizes;
}

// Prices the problem's bucketed gradients with `sizes` (the rate of a full bucket).
void SetBuckets(Problem& problem, const BucketSizes& sizes) {
  problem.options.buckets = sizes;
  const double rate = BucketedAllReduceRate(problem);
  for (Layer& l : problem.layers) {
    for (LayerOption& o : l.options) {
      if (o.bucketed) o.sync_s = o.sync_bytes * rate;
    }
  }
}

absl::Status Validate(const graph::Graph& graph, const costmodel::ClusterSpec& cluster,
                      const PlanOptions& options, int64_t batch) {
  if (options.devices < 1) {
    return base::SettingError(
        absl::InvalidArgumentError(
            absl::StrCat("the device count must be at least 1 (got ", options.devices, ")")),
        "devices");
  }
  if (options.devices > kMaxDevices) {
    return base::SettingError(
        absl::InvalidArgumentError(absl::StrCat(options.devices, " devices is more than the ",
                                                kMaxDevices, " the planner supports")),
        "devices");
  }
  if (cluster.devices_per_node < 1 || cluster.device.memory_bytes <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster '", cluster.name, "' needs devices_per_node >= 1 and device memory > 0"));
  }
  if (options.bucket_bytes < 0 || options.first_bucket_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gradient bucket sizes must be positive, or 0 for the planner to choose (got ",
        options.bucket_bytes, " and first ", options.first_bucket_bytes, ")"));
  }
  TS_RETURN_IF_ERROR(graph.Validate());
  if (graph.num_nodes() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("graph '", graph.name(), "' has no ops to plan"));
  }
  if (batch <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph '", graph.name(),
        "' has no data input with a batch dimension; the planner splits the batch over devices, "
        "so the model needs a data input (role input) whose batch axis is set"));
  }
  if (batch % options.devices != 0) {
    return base::SettingError(
        absl::InvalidArgumentError(absl::StrCat(
            "the global batch ", batch, " does not divide evenly over ", options.devices,
            " devices; use a batch that is a multiple of ", options.devices)),
        "batch");
  }
  return absl::OkStatus();
}

// The smallest device count above `devices` (dividing the batch) at which the
// least-memory plan fits, or 0.
absl::StatusOr<int> SmallestFittingDevices(const graph::Graph& graph, const PlanOptions& options,
                                           int64_t batch, int64_t capacity) {
  for (int p = options.devices + 1; p <= kMaxDevices; ++p) {
    if (batch % p != 0) continue;
    ProblemOptions po{.devices = p, .optimizer = options.optimizer,
                      .buckets = PlanningBuckets(options), .executable = options.executable};
    TS_ASSIGN_OR_RETURN(Problem problem, BuildProblem(graph, nullptr, po));
    if (PredictMemory(problem, MinimumMemoryChoice(problem), capacity).fits) return p;
  }
  return 0;
}

// ResourceExhausted: even the least-memory plan needs `peak` bytes per device; names the smallest
// device count at which this batch fits.
absl::Status OverCapacityError(const graph::Graph& graph, const costmodel::ClusterSpec& cluster,
                               const PlanOptions& options, int64_t batch, int64_t peak) {
  const int64_t capacity = cluster.device.memory_bytes;
  TS_ASSIGN_OR_RETURN(int fitting, SmallestFittingDevices(graph, options, batch, capacity));
  std::string advice = fitting > 0
      ? absl::StrCat("the smallest device count that fits this batch is ", fitting)
      : absl::StrCat("no device count up to ", kMaxDevices,
                     " that divides the batch fits; reduce the batch or use larger devices");
  return absl::ResourceExhaustedError(absl::StrCat(
      "model '", graph.name(), "' does not fit on ", options.devices, " devices of cluster '",
      cluster.name, "': even with every layer sharded it needs ", base::HumanBytesExact(peak),
      " per device, capacity ", base::HumanBytesExact(capacity), "; ", advice));
}

// Every dense layer that admits `strategy` takes it; the others choose greedily.
Choice ForcedDenseChoice(const Problem& problem, Strategy strategy) {
  std::vector<int> forced(problem.layers.size(), -1);
  for (size_t i = 0; i < problem.layers.size(); ++i) {
    forced[i] = FindOption(problem.layers[i], strategy);
    if (problem.layers[i].kind != LayerKind::kDense) forced[i] = -1;
    if (problem.layers[i].kind == LayerKind::kRecurrent) forced[i] = 0;
  }
  return PlanGreedy(problem, forced);
}

// The option a plan gives `layer`: the first with `strategy` and, when the plan records it,
// its output layout (two options of a layer may share a strategy).
absl::StatusOr<int> GivenOption(const Problem& problem, const Layer& layer, Strategy strategy,
                                const std::map<std::string, Layout>& output_layouts) {
  const auto out = output_layouts.find(layer.name);
  const int any = FindOption(layer, strategy);
  const int option = out == output_layouts.end() ? any
                                                  : FindOption(layer, strategy, out->second);
  if (option >= 0) return option;
  // Name the layout only when it is what the layer lacks, not the strategy itself.
  return absl::InvalidArgumentError(absl::StrCat(
      "layer '", layer.name, "' (", layer.op, ") cannot be ", StrategyName(strategy),
      any >= 0 ? absl::StrCat(" with its output in the ", LayoutName(out->second), " layout") : "",
      " here", problem.options.executable ? " in a plan the runtime executes" : ""));
}

absl::StatusOr<Choice> GivenChoice(const Problem& problem, const PlanOptions& options) {
  const std::map<std::string, Strategy>& strategies = options.strategies;
  for (const auto& [name, layout] : options.output_layouts) {
    if (!strategies.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the plan gives layer '", name, "' an output layout but no strategy"));
    }
  }
  std::vector<int> forced(problem.layers.size(), -1);
  size_t named = 0;
  for (size_t i = 0; i < problem.layers.size(); ++i) {
    auto it = strategies.find(problem.layers[i].name);
    if (it == strategies.end()) continue;
    ++named;
    TS_ASSIGN_OR_RETURN(forced[i], GivenOption(problem, problem.layers[i], it->second,
                                               options.output_layouts));
  }
  if (named != strategies.size()) {
    for (const auto& [name, s] : strategies) {
      bool found = false;
      for (const Layer& l : problem.layers) found = found || l.name == name;
      if (!found) {
        return absl::InvalidArgumentError(
            absl::StrCat("the plan names layer '", name, "', which the model does not have"));
      }
    }
  }
  return PlanGreedy(problem, forced);
}

// A baseline with its own bucket sizes (chosen as the plan's are).
BaselinePrediction Baseline(const Problem& problem, const Choice& choice, int64_t capacity,
                            const PlanOptions& options) {
  Problem own = problem;
  own.options.buckets = ChooseBuckets(problem, choice, capacity, options);
  const Simulation s = Simulate(own, choice, capacity, false);
  return {.step_time_s = s.step.step_time_s,
          .peak_bytes = s.memory.peak_bytes.empty() ? 0 : s.memory.peak_bytes[0],
          .fits = s.memory.fits};
}

absl::string_view PlannerName(PlannerKind kind) {
  switch (kind) {
    case PlannerKind::kAuto: return "heuristic";
    case PlannerKind::kData: return "data";
    case PlannerKind::kModel: return "model";
    case PlannerKind::kOptimal: return "optimal";
    case PlannerKind::kLate: return "late";
    case PlannerKind::kGiven: return "given";
  }
  return "";
}

// The chosen option's activation layouts, inputs named as in the graph.
void SetLayouts(const graph::Graph& graph, const Problem& problem, const Layer& l,
                const LayerOption& o, LayerPlan& plan) {
  plan.output_layout = o.output;
  plan.input_layouts = o.inputs;
  plan.partial_dx = o.partial_dx;
  for (int e : l.inputs) {
    const graph::TensorId t = problem.edges[e].tensor;
    plan.input_tensors.push_back(t);
    plan.input_tensor_names.push_back(graph.tensor(t).name);
  }
}

void FillLayers(const graph::Graph& graph, const Problem& problem, const Choice& choice,
                const Simulation& sim, const std::vector<std::string>& reasons, Plan& plan) {
  for (size_t i = 0; i < problem.layers.size(); ++i) {
    const Layer& l = problem.layers[i];
    const LayerStats& s = sim.layers[i];
    plan.layers.push_back({.node = l.node, .name = l.name, .op = l.op,
                           .param_names = l.param_names, .params = l.params,
                           .forward_flops = l.forward_flops,
                           .strategy = l.options[choice[i]].strategy, .reason = reasons[i],
                           .comm_bytes = std::llround(s.sent_bytes),
                           .compute_s = s.compute_s, .comm_s = s.comm_s,
                           .memory_bytes = s.memory_bytes});
    SetLayouts(graph, problem, l, l.options[choice[i]], plan.layers.back());
  }
}

// Replaces the activation peak by the arena the static offset planner finds for it.
absl::Status PlanActivationArena(const Problem& problem, const Choice& choice,
                                 const PlanOptions& options, MemoryPrediction& memory) {
  const std::vector<memory::Buffer> buffers = DeviceTransientBuffers(problem, choice);
  TS_ASSIGN_OR_RETURN(memory::OffsetPlan arena,
                      memory::PlanOffsets(buffers,
                                          {.time_limit_s = options.memory_time_limit_s,
                                           .max_iterations = options.memory_search_iterations}));
  memory.activation_bytes = arena.arena_bytes;
  memory.activation_lower_bound_bytes = arena.lower_bound;
  memory.activation_no_reuse_bytes = 0;
  for (const memory::Buffer& b : buffers) memory.activation_no_reuse_bytes += b.size;
  SetPeak(memory);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Plan> PlanModel(const graph::Graph& graph, const costmodel::ClusterSpec& cluster,
                               const costmodel::CostModel& cost, const PlanOptions& options) {
  const int64_t batch = graph::GraphBatch(graph);
  TS_RETURN_IF_ERROR(Validate(graph, cluster, options, batch));
  const int64_t capacity = cluster.device.memory_bytes;
  ProblemOptions po{.devices = options.devices, .optimizer = options.optimizer,
                    .buckets = PlanningBuckets(options), .executable = options.executable};
  TS_ASSIGN_OR_RETURN(Problem problem, BuildProblem(graph, &cost, po));
  const Choice data_choice = AllDataParallel(problem);
  const Choice model_choice = ForcedDenseChoice(problem, Strategy::kModelParallel);
  Choice choice;
  switch (options.planner) {
    case PlannerKind::kData: choice = data_choice; break;
    case PlannerKind::kModel: choice = model_choice; break;
    case PlannerKind::kLate: choice = ForcedDenseChoice(problem, Strategy::kLateMultiply); break;
    case PlannerKind::kGiven: {
      TS_ASSIGN_OR_RETURN(choice, GivenChoice(problem, options));
      break;
    }
    case PlannerKind::kAuto: choice = PolishWithSimulator(problem, PlanHeuristic(problem)); break;
    case PlannerKind::kOptimal:
      choice = PolishWithSimulator(problem, PlanExact(problem).choice);
      break;
  }
  ReasonContext why{.planner = std::string(PlannerName(options.planner))};
  if (options.planner == PlannerKind::kAuto || options.planner == PlannerKind::kOptimal) {
    const Choice before = choice;
    ShardResult sharded = ShardToFit(problem, choice, capacity);
    if (!sharded.fits && !options.allow_over_capacity) {
      return OverCapacityError(graph, cluster, options, batch,
                               PredictMemory(problem, sharded.choice, capacity).peak_bytes[0]);
    }
    for (int i : sharded.switched) {
      why.sharded.push_back(i);
      why.saved.push_back(LayerMemory(problem, problem.layers[i].options[before[i]]) -
                          LayerMemory(problem, problem.layers[i].options[sharded.choice[i]]));
    }
    choice = std::move(sharded.choice);
  }
  SetBuckets(problem, ChooseBuckets(problem, choice, capacity, options));
  const Simulation sim = Simulate(problem, choice, capacity, true);
  const costmodel::GraphEstimate estimate = costmodel::EstimateGraph(graph);
  Plan plan{.model_name = graph.name(), .model_params = graph::CountParameters(graph),
            .model_forward_flops = estimate.flops_forward, .model_ops = graph.num_nodes(),
            .batch = batch, .cluster_name = cluster.name, .devices = options.devices,
            .nodes = (options.devices + cluster.devices_per_node - 1) / cluster.devices_per_node,
            .planner = std::string(PlannerName(options.planner))};
  FillLayers(graph, problem, choice, sim, LayerReasons(problem, choice, why), plan);
  plan.predicted = sim.step;
  plan.predicted.samples_per_s = sim.step.step_time_s > 0 ? batch / sim.step.step_time_s : 0;
  plan.memory = sim.memory;
  plan.buckets = problem.options.buckets;
  TS_RETURN_IF_ERROR(PlanActivationArena(problem, choice, options, plan.memory));
  plan.timeline = sim.timeline;
  plan.data_parallel = Baseline(problem, data_choice, capacity, options);
  plan.model_parallel = Baseline(problem, model_choice, capacity, options);
  return plan;
}

}  // namespace tessera::partitioner
