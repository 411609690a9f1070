// One worker's training step: the graph run forward and backward on one back-end of the
// execution seam (exec/backend/backend.h: the CPU kernels by default, the CUDA ones with
// ProgramOptions::backend), every transient tensor (activations, their gradients, data inputs)
// at its planned offset in one arena, parameters and their gradients in their own storage, all
// in the back-end's memory.
//
//   TS_ASSIGN_OR_RETURN(auto program, TrainingProgram::Create(graph, {.seed = 1}));
//   TS_RETURN_IF_ERROR(program->SetInput("x", images));       // floats
//   TS_RETURN_IF_ERROR(program->SetInput("labels", labels));  // integers
//   TS_RETURN_IF_ERROR(program->RunStep());                   // forward + backward
//   float loss = program->Loss();
//   for (TrainingProgram::Parameter& p : program->parameters()) { /* p.value, p.grad */ }
//
// The backward pass is reverse-mode automatic differentiation over the graph: the schedule of
// memory/lifetime.h runs each node's backward kernel (Backend::Backward) in reverse order,
// gradients of a tensor read by several nodes are summed, and the loss (the first graph output)
// is seeded with 1. Gradients of parameters are overwritten by each step, not accumulated.
//
// Memory: the arena is planned once by the static offset planner from the step's lifetimes,
// with the in-place and view sharing of docs/lifetimes.md; a kernel whose output would overwrite
// what it still reads computes into scratch memory first. Data inputs live in the arena too, so
// they must be set before every step; kernel state (masks, statistics) lives beside it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tessera/exec/backend/backend.h"
#include "tessera/exec/node_kernel.h"
#include "tessera/graph/graph.h"
#include "tessera/memory/lifetime.h"
#include "tessera/memory/offset_planner.h"

namespace tessera::exec {

class TrainingProgram;

struct ProgramOptions {
  uint64_t seed = 0;            // parameter initialisation and dropout masks
  // Where the step runs (exec/backend/backend.h); null: the CPU back-end with `threads`.
  std::shared_ptr<Backend> backend;
  int threads = 2;              // intra-op threads of the default CPU back-end
  bool in_place = true;         // share memory in place where the lifetimes allow it
  double plan_time_limit_s = 0.2;  // for the arena's offsets
  // The loss gradient's seed. A data-parallel worker whose loss is the mean over its 1/P of the
  // global batch seeds 1/P, so that the workers' gradients sum to the global batch's.
  float loss_scale = 1.f;
  // Nodes, by name, whose forward and backward `NodeKernel` computes instead of the back-end's
  // kernels (exec/node_kernel.h). InvalidArgument at Create for a name that is not a node.
  absl::flat_hash_map<std::string, std::shared_ptr<NodeKernel>> node_kernels;
  // Called by RunStep on its own thread as soon as parameters()[i]'s gradient is final for the
  // step (after the last backward kernel that adds to it): the data-parallel runtime launches
  // its all-reduce there, overlapped with the rest of backward. An error ends the step.
  std::function<absl::Status(size_t i)> on_gradient_ready;
  // Called by RunStep and RunForward after each node's forward (`backward` false) or backward
  // kernel with the wall seconds it took (the backward's gradient sums included): what
  // exec/op_profile.h measures a model's ops with. Unset, nothing is timed.
  std::function<void(graph::NodeId node, bool backward, double seconds)> on_node_timed;
  // Another program of the same model at other shapes (a shorter sequence, a narrower image:
  // DataSource::Variant) whose parameters, their gradients and floating constants (batch-norm
  // statistics) this one uses instead of its own: a step of either updates both. Each parameter
  // must be there by name with the same element count; a floating constant is shared when the
  // two graphs define it alike (same count and initial values), else kept apart. The back-end
  // is that program's (`backend` and `threads` are ignored). It must outlive this program.
  const TrainingProgram* share_persistent_with = nullptr;
};

class TrainingProgram {
 public:
  // A parameter's values and gradient in the back-end's memory: host code reads them through
  // backend() (ReadFloats, WriteFloats in backend.h) unless backend().host_memory().
  struct Parameter {
    std::string name;
    graph::TensorId tensor = graph::kNoTensor;
    absl::Span<float> value;
    absl::Span<float> grad;
  };

  // InvalidArgument naming the node when the graph is invalid, has no floating scalar output to
  // use as the loss, or uses an op without a kernel on the back-end.
  static absl::StatusOr<std::unique_ptr<TrainingProgram>> Create(graph::Graph graph,
                                                                 const ProgramOptions& options);
  ~TrainingProgram();

  // Copies a data input's values for the next step. InvalidArgument naming the input when the
  // name is unknown, the count differs from the input's element count, the type is wrong, or
  // (integers) a value does not fit the input's dtype.
  absl::Status SetInput(absl::string_view name, absl::Span<const float> values);
  absl::Status SetInput(absl::string_view name, absl::Span<const int64_t> values);

  // Forward and backward. FailedPrecondition naming an input not set since the last step.
  absl::Status RunStep();
  // Forward only, with Dropout off and BatchNorm as in evaluation (`training` false).
  absl::Status RunForward(bool training = false);

  // The loss of the last step (the first graph output), and copies of every graph output. The
  // step keeps its outputs in the back-end's memory; the first of these calls after a step reads
  // them to the host (so a GPU step waits for nothing it was not asked for). A failed read gives
  // NaN and an empty span; the back-end's next call returns its error.
  float Loss() const;
  // Empty when `name` is not a graph output.
  absl::Span<const float> Output(absl::string_view name) const;

  // A copy of a parameter's or floating constant's values (e.g. batch-norm running statistics,
  // which every training forward updates); empty for any other name.
  std::vector<float> PersistentValue(absl::string_view name) const;
  // Overwrites a parameter's or floating constant's values (e.g. trained weights and running
  // statistics loaded for evaluation). InvalidArgument naming it when it is neither or the
  // count differs.
  absl::Status SetPersistentValue(absl::string_view name, absl::Span<const float> values);

  std::vector<Parameter>& parameters() { return parameters_; }
  Backend& backend() const;
  // Indices into parameters() in the order RunStep reports their gradients ready.
  std::vector<size_t> GradientReadyOrder() const;
  const graph::Graph& graph() const { return graph_; }
  const memory::TrainingLifetimes& lifetimes() const { return lifetimes_; }
  const memory::OffsetPlan& arena_plan() const { return arena_plan_; }
  // Training steps run so far (RunStep only; RunForward does not count). Dropout masks follow
  // it, so a resumed run sets it back to the checkpoint's value.
  int64_t steps_run() const { return steps_run_; }
  void set_steps_run(int64_t steps) { steps_run_ = steps; }
  // The loss gradient's seed from the next step on (ProgramOptions::loss_scale at first).
  void set_loss_scale(float scale);

 private:
  struct Impl;
  struct SharedTensor {
    std::byte* value = nullptr;
    std::byte* grad = nullptr;
  };
  static absl::StatusOr<absl::flat_hash_map<graph::TensorId, SharedTensor>>
  SharedPersistentTensors(const graph::Graph& g, const TrainingProgram& other, uint64_t seed);
  explicit TrainingProgram(graph::Graph graph);
  absl::Status Run(bool backward, bool training);
  absl::Status TimedNode(graph::NodeId id, bool backward);  // the on_node_timed hook around
  absl::Status ForwardNode(graph::NodeId id);
  absl::Status BackwardNode(graph::NodeId id);
  absl::Status CopyOutputs();  // into the back-end's output storage, at the end of forward
  absl::Status ReadOutputs() const;  // that storage to the host, when stale
  absl::Status SeedLoss();
  absl::Status ZeroUnwrittenParameterGradients();
  // training_program_hooks.cc: ProgramOptions' hooks.
  absl::Status InstallHooks(const ProgramOptions& options);
  void ScheduleGradientReady();
  absl::Status ReportGradientsReady(const std::vector<size_t>& params);

  graph::Graph graph_;
  memory::TrainingLifetimes lifetimes_;
  memory::OffsetPlan arena_plan_;
  std::vector<Parameter> parameters_;
  std::unique_ptr<Impl> impl_;
  int64_t steps_run_ = 0;
};

}  // namespace tessera::exec
