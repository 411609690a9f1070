// Lifetime analysis of one training step: the schedule (forward, backward, optimizer update),
// every value the step holds in memory with its first and last step and its size, in-place and
// view sharing, and the transient values as buffers for the static offset planner.
//
//   TS_ASSIGN_OR_RETURN(TrainingLifetimes t,
//                       AnalyzeTrainingLifetimes(g, {.optimizer_states_per_param = 2}));
//   t.persistent_bytes;                            // parameters, their gradients, Adam m and v
//   std::vector<Buffer> buffers = TransientBuffers(t);
//   TS_ASSIGN_OR_RETURN(OffsetPlan plan, PlanOffsets(buffers));   // memory/offset_planner.h
//   PeakReport peak = LiveAtPeak(t);               // t.values[peak.values[0]] is the largest
//
// The schedule (steps are indices into TrainingLifetimes::steps):
// - Forward: every node in graph::Graph::TopologicalOrder(), one step each.
// - Backward: the nodes that have a backward (some input needs a gradient,
//   costmodel/backward_reads.h) in reverse forward order, one step each.
// - Update: one step per trainable parameter (floating, role kParameter) in TensorId order.
// Lifetimes are inclusive [first_step, last_step]:
// - Data input: [0, last forward consumer or backward reader]; transient.
// - Activation (any tensor a node produces): [producer's forward step, max(last forward
//   consumer, last backward step that reads it, end of forward if it is a graph output)].
// - Gradient of an activation that needs one: from the first backward step of its consumers
//   (their contributions accumulate into one buffer; a graph output's seed appears at its
//   producer's backward step) to its producer's backward step. Transient, also for tensors
//   derived only from parameters (e.g. a transposed weight).
// - Saved (masks, indices, statistics a node keeps itself): [forward step, backward step].
// - Parameters, their gradients, optimizer state and constants: persistent, the whole step.
// Sharing (options.in_place): views (Identity, Reshape, Flatten, Squeeze, Unsqueeze) always
// share their input's memory, and their output gradient shares their input gradient's. An
// element-wise op (unary ops but Cast; Add, Sub, Mul, Div) writes its output over an input
// whose memory (with everything sharing it) is last used at this very forward step, is
// transient, holds no data input nor graph output and has the same size; its backward writes
// an input's gradient over the output's gradient when this step is the first contribution
// to that input gradient and the last use of the output gradient. docs/lifetimes.md.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "tessera/graph/graph.h"
#include "tessera/memory/buffer.h"

namespace tessera::memory {

enum class Phase : uint8_t { kForward, kBackward, kUpdate };

// One step of the schedule. `node` is the node run forward or backward (kNoNode for an update);
// `name` is the node's name, or the parameter's name for an update.
struct Step {
  Phase phase = Phase::kForward;
  graph::NodeId node = graph::kNoNode;
  std::string name;
};

enum class ValueKind : uint8_t {
  kDataInput,           // a tensor of role kInput
  kActivation,          // a tensor a node produces
  kActivationGradient,  // the gradient of an activation
  kSaved,               // masks, indices, statistics a node saves for its backward
  kParameter,
  kParameterGradient,
  kOptimizerState,
  kConstant,            // a tensor of role kConstant (e.g. batch-norm running statistics)
};

// "data_input", "activation", "activation_gradient", "saved", "parameter",
// "parameter_gradient", "optimizer_state", "constant".
absl::string_view ValueKindName(ValueKind kind);
// Parameters, their gradients, optimizer state and constants: never in the transient arena.
bool IsPersistent(ValueKind kind);

struct Value {
  // "conv1", "grad(conv1)", "grad(fc.weight)", "adam_m(fc.weight)", "maxpool1.indices".
  std::string name;
  ValueKind kind = ValueKind::kActivation;
  graph::TensorId tensor = graph::kNoTensor;  // the forward tensor it is, or is the gradient of
  // The node that produces or owns it (per-layer scaling): the producer; a node's saved
  // values; for data inputs, parameters and their gradients and state, the first node
  // reading the tensor in the forward order (kNoNode if none).
  graph::NodeId node = graph::kNoNode;
  int64_t bytes = 0;  // elements x dtype size
  int64_t first_step = 0, last_step = 0;  // inclusive indices into TrainingLifetimes::steps
  // In-place or view: the index of a value whose memory this one shares (-1: none). Following
  // shares_with from any value ends at its group's root.
  int64_t shares_with = -1;
};

struct LifetimeOptions {
  int optimizer_states_per_param = 0;  // SGD 0, momentum 1, Adam 2
  bool in_place = true;                // false: no sharing at all, not even views
  int64_t alignment = 256;             // of every transient buffer (a power of two)
  // Nodes, by name, whose output shapes are not checked against shape inference and whose
  // values share no memory (no views, nothing in place): their kernels are the caller's (a
  // rank's model-parallel layer reads a weight shard; a layer reading its input in another
  // layout computes on a copy of another shape).
  std::set<std::string> custom_nodes;
};

struct TrainingLifetimes {
  std::vector<Step> steps;
  std::vector<Value> values;
  int64_t persistent_bytes = 0;          // bytes of the persistent values (no alignment)
  int64_t transient_bytes_no_reuse = 0;  // sum of TransientBuffers(*this) sizes
  int64_t alignment = 256;               // LifetimeOptions::alignment
};

// InvalidArgument naming the node or tensor when the graph is invalid (graph::Graph::Validate,
// e.g. a cycle), has no nodes, or its shapes are not inferred (graph::InferShapes), and
// naming the option when an option is out of range.
absl::StatusOr<TrainingLifetimes> AnalyzeTrainingLifetimes(const graph::Graph& g,
                                                           const LifetimeOptions& o = {});

// Identity, Reshape, Flatten, Squeeze, Unsqueeze: ops whose output is a view of their input, so
// with `in_place` the output and its gradient share the input's memory (and its gradient's).
bool IsViewOp(graph::OpKind kind);
// The input slots an element-wise op may write its output over (with `in_place`, when that
// input dies there): both operands of Add, Sub, Mul, Div; the input of a unary op but Cast.
std::vector<int> InPlaceInputSlots(graph::OpKind kind);

// The index of the value with this name, or -1.
int64_t FindValue(const TrainingLifetimes& t, absl::string_view name);

// Transient values as planner buffers. A value and everything that shares its memory are one
// Buffer: id = index of the group's root value, [min first_step, max last_step + 1), size =
// max bytes of the members rounded up to the alignment. Groups holding a persistent value are
// left out. `scale_by_node` (empty, or one entry >= 0 per NodeId) multiplies the bytes of
// values owned by that node (rounded up); values of no node are not scaled; a group whose
// scaled size is 0 is dropped. Sorted by id.
std::vector<Buffer> TransientBuffers(const TrainingLifetimes& t,
                                     absl::Span<const double> scale_by_node = {});

// The first step with the most live transient bytes (the buffers of TransientBuffers live
// there), and the transient values live at that step, largest (scaled) first.
struct PeakReport {
  int64_t step = 0;
  int64_t live_bytes = 0;
  std::vector<int64_t> values;  // indices into TrainingLifetimes::values
};
PeakReport LiveAtPeak(const TrainingLifetimes& t, absl::Span<const double> scale_by_node = {});

}  // namespace tessera::memory
