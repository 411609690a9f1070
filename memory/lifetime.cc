// The lifetime analysis of a training step: checks its input, then builds the schedule, the
// values and their sharing (memory/lifetime_values.cc, memory/lifetime_sharing.cc).
#include "tessera/memory/lifetime.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/base/text_format.h"
#include "tessera/costmodel/backward_reads.h"
#include "tessera/graph/shape_inference.h"
#include "tessera/memory/lifetime_impl.h"

namespace tessera::memory {
namespace {

using lifetime_internal::ScheduleIndex;
using lifetime_internal::ValueIndex;

constexpr int kMaxOptimizerStates = 16;
constexpr int64_t kMaxValueBytes = int64_t{1} << 50;  // 1 PiB: far beyond any device

absl::Status CheckOptions(const LifetimeOptions& o) {
  if (o.optimizer_states_per_param < 0 || o.optimizer_states_per_param > kMaxOptimizerStates) {
    return absl::InvalidArgumentError(absl::StrCat(
        "optimizer_states_per_param ", o.optimizer_states_per_param, " must be 0 to ",
        kMaxOptimizerStates, " (SGD 0, momentum 1, Adam 2)"));
  }
  if (o.alignment <= 0 || (o.alignment & (o.alignment - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("alignment ", o.alignment, " must be a power of two (e.g. 256)"));
  }
  return absl::OkStatus();
}

std::string TypeString(const graph::Shape& shape, graph::DType dtype) {
  return absl::StrCat(graph::ShapeString(shape), " ", graph::DTypeName(dtype));
}

// Shapes are inferred when every node's outputs carry what shape inference gives them.
absl::Status CheckShapesInferred(const graph::Graph& g, const std::vector<graph::NodeId>& order,
                                 const std::set<std::string>& custom_nodes) {
  const char* kFix = "; run graph::InferShapes on the graph before the lifetime analysis";
  for (graph::NodeId n : order) {
    const graph::Node& node = g.node(n);
    if (custom_nodes.contains(node.name)) continue;
    absl::StatusOr<std::vector<graph::TensorType>> types = graph::InferOutputTypes(g, node);
    if (!types.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(types.status().message(), kFix));
    }
    const std::string where =
        absl::StrCat("node '", node.name, "' (", graph::OpName(node.kind), ")");
    if (types->size() != node.outputs.size()) {
      return absl::InvalidArgumentError(absl::StrCat(where, " has ", node.outputs.size(),
                                                     " outputs but shape inference gives ",
                                                     types->size(), kFix));
    }
    for (size_t i = 0; i < types->size(); ++i) {
      const graph::Tensor& out = g.tensor(node.outputs[i]);
      const graph::TensorType& want = (*types)[i];
      if (out.shape == want.shape && out.dtype == want.dtype) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": output '", out.name, "' is ", TypeString(out.shape, out.dtype),
          " but its inputs give ", TypeString(want.shape, want.dtype), kFix));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSizes(const std::vector<Value>& values) {
  for (const Value& v : values) {
    if (v.bytes <= kMaxValueBytes) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "value '", v.name, "' needs ", base::HumanBytesExact(v.bytes),
        ", more than the 1 PiB (2^50 bytes) the lifetime analysis handles; check the shapes of "
        "the graph"));
  }
  return absl::OkStatus();
}

int64_t SatAdd(int64_t a, int64_t b) {
  return b > std::numeric_limits<int64_t>::max() - a ? std::numeric_limits<int64_t>::max() : a + b;
}

}  // namespace

absl::string_view ValueKindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::kDataInput: return "data_input";
    case ValueKind::kActivation: return "activation";
    case ValueKind::kActivationGradient: return "activation_gradient";
    case ValueKind::kSaved: return "saved";
    case ValueKind::kParameter: return "parameter";
    case ValueKind::kParameterGradient: return "parameter_gradient";
    case ValueKind::kOptimizerState: return "optimizer_state";
    case ValueKind::kConstant: return "constant";
  }
  return "?";
}

bool IsPersistent(ValueKind kind) {
  return kind == ValueKind::kParameter || kind == ValueKind::kParameterGradient ||
         kind == ValueKind::kOptimizerState || kind == ValueKind::kConstant;
}

absl::StatusOr<TrainingLifetimes> AnalyzeTrainingLifetimes(const graph::Graph& g,
                                                           const LifetimeOptions& o) {
  TS_RETURN_IF_ERROR(CheckOptions(o));
  TS_RETURN_IF_ERROR(g.Validate());
  if (g.num_nodes() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph '", g.name(), "' has no nodes; a training step needs some"));
  }
  TS_ASSIGN_OR_RETURN(std::vector<graph::NodeId> order, g.TopologicalOrder());
  TS_RETURN_IF_ERROR(CheckShapesInferred(g, order, o.custom_nodes));

  const costmodel::BackwardInfo backward = costmodel::AnalyzeBackward(g);
  TrainingLifetimes t;
  t.alignment = o.alignment;
  const ScheduleIndex schedule =
      lifetime_internal::BuildSchedule(g, backward, std::move(order), t.steps);
  ValueIndex index;
  t.values = lifetime_internal::BuildValues(g, backward, schedule, o.optimizer_states_per_param,
                                            index);
  TS_RETURN_IF_ERROR(CheckSizes(t.values));
  if (o.in_place) lifetime_internal::ShareMemory(g, schedule, index, o.custom_nodes, t.values);

  for (const Value& v : t.values) {
    if (IsPersistent(v.kind)) t.persistent_bytes = SatAdd(t.persistent_bytes, v.bytes);
  }
  for (const Buffer& b : TransientBuffers(t)) {
    t.transient_bytes_no_reuse = SatAdd(t.transient_bytes_no_reuse, b.size);
  }
  return t;
}

int64_t FindValue(const TrainingLifetimes& t, absl::string_view name) {
  for (size_t i = 0; i < t.values.size(); ++i) {
    if (t.values[i].name == name) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace tessera::memory
