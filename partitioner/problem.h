// The planning problem: the graph's layers in topological order, each with the
// strategies it admits and their costs, and the tensors flowing between layers
// with their transition costs. Built once; every planner and the simulator read it.
//
//   TS_ASSIGN_OR_RETURN(Problem p, BuildProblem(graph, &cost, {.devices = 64}));
//   for (const Layer& l : p.layers) l.options.size();   // admissible strategies
//   Choice c = AllDataParallel(p);                      // one option index per layer
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/costmodel/cost_model.h"
#include "tessera/costmodel/op_estimate.h"
#include "tessera/costmodel/optimizer_kind.h"
#include "tessera/graph/graph.h"
#include "tessera/memory/lifetime.h"
#include "tessera/partitioner/layout.h"
#include "tessera/partitioner/plan.h"

namespace tessera::partitioner {

// One strategy of one layer: the layouts it reads and writes and what it costs.
struct LayerOption {
  Strategy strategy = Strategy::kDataParallel;
  std::vector<Layout> inputs;  // required layout of each data input (Layer::inputs order)
  Layout output = Layout::kBatch;
  bool partial_dx = false;     // dX of its (replicated) inputs are partial sums
  double forward_compute_s = 0, backward_compute_s = 0;
  double forward_comm_s = 0, backward_comm_s = 0;  // blocking activation collectives
  double blocking_sent_bytes = 0;
  // Gradient traffic on the communication channel, launched when the layer's
  // backward ends: all-reduced in buckets (`bucketed`) or one collective of its own
  // (sparse embedding gradients, late-multiply's gathers).
  double sync_bytes = 0;       // the collective's buffer size
  double sync_s = 0;           // its time (bucketed: the per-byte rate of a full bucket)
  double sync_sent_bytes = 0;
  bool bucketed = false;
  int64_t param_bytes = 0;      // parameters held per device
  int64_t activation_bytes = 0; // kept for backward, per device
  int64_t workspace_bytes = 0;  // transient, per device
  std::string detail;           // what the strategy moves, for the plan's reason
};

// A tensor read by a layer: produced by a layer, or a data input (free in any layout).
struct Edge {
  graph::TensorId tensor = graph::kNoTensor;
  int producer = -1;           // layer index; -1 for a data input
  double bytes = 0;            // whole tensor
  bool needs_grad = false;
  std::vector<int> consumers;  // layer indices, ascending
  EdgeCosts costs;
};

enum class LayerKind : uint8_t {
  kDense,        // Gemm / MatMul with a parameter, Conv, Embedding
  kRecurrent,    // LSTM: data-parallel only
  kParamOther,   // other ops with parameters (norms, biases): batch or replicated
  kParamless,
};

struct Layer {
  graph::NodeId node = graph::kNoNode;
  std::string name;
  std::string op;
  LayerKind kind = LayerKind::kParamless;
  std::vector<std::string> param_names;
  int64_t params = 0;           // elements of the parameters it reads
  int64_t owned_param_bytes = 0;// bytes of the parameters first read here (shared ones count once)
  // The same parameters one by one, in parameter order: the gradients this layer hands to the
  // gradient buckets when data-parallel, in the order the runtime fills them.
  std::vector<int64_t> owned_param_sizes;
  double forward_flops = 0, backward_flops = 0;  // whole global batch
  int64_t activation_bytes = 0; // whole batch
  double flops_per_param_byte = 0;  // per device, forward + backward; 0 without parameters
  std::vector<int> inputs;      // edge index per data input
  std::vector<graph::TensorId> outputs;
  std::vector<LayerOption> options;
};

struct ProblemOptions {
  int devices = 1;
  costmodel::OptimizerKind optimizer = costmodel::OptimizerKind::kSgd;
  BucketSizes buckets;  // the gradient buckets the simulator fills (PlanModel tunes them)
  // Only the options exec's hybrid runtime runs (docs/partitioner.md, "Executable plans"):
  // every layer reads and writes the batch layout; model-parallel Gemm/MatMul layers do their
  // own collectives; late-multiply as usual; no feature or replicated layouts, no sparse
  // embedding gradients.
  bool executable = false;
};

struct Problem {
  std::vector<Layer> layers;  // topological order, parameter derivations folded away
  std::vector<Edge> edges;
  ProblemOptions options;
  CommContext comm;
  int64_t data_input_activation_bytes = 0;  // data inputs kept for backward, whole batch
  // The training step's lifetimes at the global batch (memory/lifetime.h), and each layer's
  // forward and backward step in them (-1: no backward): activation memory comes from these.
  memory::TrainingLifetimes lifetimes;
  std::vector<int64_t> forward_step, backward_step;  // per layer
  graph::NodeId num_nodes = 0;
};

// One option index per layer.
using Choice = std::vector<int>;

// `graph` has inferred shapes. `cost` may be null: every time is then 0 (used to
// ask which device counts fit in memory).
absl::StatusOr<Problem> BuildProblem(const graph::Graph& graph, const costmodel::CostModel* cost,
                                     const ProblemOptions& options);

// The index of `layer`'s first option with `strategy` (and, when given, that leaves its output
// in `output`), or -1: two options of a layer may share a strategy and differ in layout
// (model_parallel on the feature axis, or folded back to the batch), and a plan file names
// which.
int FindOption(const Layer& layer, Strategy strategy,
               std::optional<Layout> output = std::nullopt);
// Every layer data-parallel (parameterless ones on the batch layout).
Choice AllDataParallel(const Problem& problem);

}  // namespace tessera::partitioner
