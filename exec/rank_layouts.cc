// AssignLayouts (rank_plan_impl.h): where each tensor lives on a rank, from the layouts the plan
// gives its producer and consumers, and the transitions the consumers make.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/exec/rank_plan_impl.h"

namespace tessera::exec::rank_plan_internal {
namespace {

using graph::TensorId;
using partitioner::Layout;

bool IsActivationOrInput(const graph::Tensor& t) {
  return t.role == graph::TensorRole::kActivation || t.role == graph::TensorRole::kInput;
}

// Per tensor: the layout its producer leaves it in; data inputs read in another layout than
// the batch by some layer are held whole.
std::vector<Layout> TensorLayouts(const graph::Graph& global, const partitioner::Plan& plan) {
  std::vector<Layout> layout(global.num_tensors(), Layout::kBatch);
  for (const partitioner::LayerPlan& l : plan.layers) {
    for (TensorId t : global.node(l.node).outputs) layout[t] = l.output_layout;
  }
  for (const partitioner::LayerPlan& l : plan.layers) {
    for (size_t k = 0; k < l.input_tensors.size() && k < l.input_layouts.size(); ++k) {
      const TensorId t = l.input_tensors[k];
      if (global.tensor(t).role == graph::TensorRole::kInput && l.input_layouts[k] != Layout::kBatch) {
        layout[t] = Layout::kReplicated;
      }
    }
  }
  return layout;
}

// The axis `layout` splits tensor t along on the ranks: its batch axis, its last axis, or -1.
absl::StatusOr<int> LayoutAxis(const partitioner::LayerPlan& l, const graph::Graph& global,
                               const RankPlan& r, TensorId t, Layout layout) {
  const graph::Tensor& x = global.tensor(t);
  switch (layout) {
    case Layout::kReplicated: return -1;
    case Layout::kFeature: return static_cast<int>(x.shape.size()) - 1;
    case Layout::kBatch: break;
  }
  const int axis = SplitAxis(x.shape, r.graph.tensor(t).shape, r.ranks);
  if (axis < 0) {
    return LayerError(l, absl::StrCat("its input '", x.name, "' changes layout but is not split "
                                      "along one batch axis"));
  }
  return axis;
}

// The layer's transitions: every input it reads in another layout than it is held in (or
// whole with a gradient that is a partial sum).
absl::StatusOr<std::vector<InputTransition>> Transitions(const graph::Graph& global,
                                                         const partitioner::LayerPlan& l,
                                                         const std::vector<Layout>& layout,
                                                         const RankPlan& r) {
  std::vector<InputTransition> out;
  const graph::Node& node = global.node(l.node);
  for (size_t k = 0; k < l.input_tensors.size() && k < l.input_layouts.size(); ++k) {
    const TensorId t = l.input_tensors[k];
    const Layout from = layout[t], to = l.input_layouts[k];
    const bool summed = l.partial_dx && to == Layout::kReplicated;
    const graph::Tensor& x = global.tensor(t);
    // Data inputs have no gradient to sum.
    if (from == to && (!summed || x.role == graph::TensorRole::kInput)) continue;
    if (from == Layout::kReplicated && x.role != graph::TensorRole::kInput) {
      return LayerError(l, absl::StrCat("its input '", x.name, "' is replicated; the runtime "
                                        "replicates data inputs only"));
    }
    const bool floating = graph::IsFloating(x.dtype);
    if (!floating && from != Layout::kReplicated && to != Layout::kReplicated) {
      return LayerError(l, absl::StrCat("its input '", x.name, "' holds ",
                                        graph::DTypeName(x.dtype), " values, which the runtime "
                                        "gathers or slices but does not exchange"));
    }
    TS_ASSIGN_OR_RETURN(const int from_axis, LayoutAxis(l, global, r, t, from));
    TS_ASSIGN_OR_RETURN(const int to_axis, LayoutAxis(l, global, r, t, to));
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] != t) continue;
      out.push_back({.input = static_cast<int>(i), .from = from, .to = to,
                     .from_axis = from_axis, .to_axis = to_axis, .partial = summed});
    }
  }
  return out;
}

// Tensor t's shape on this rank in `layout`.
absl::Status ShapeFor(const graph::Graph& global, TensorId t, Layout layout, RankPlan& r) {
  graph::Tensor& mine = r.graph.mutable_tensor(t);
  const graph::Tensor& whole = global.tensor(t);
  if (layout == Layout::kBatch) return absl::OkStatus();
  mine.shape = whole.shape;
  if (layout == Layout::kReplicated || mine.shape.empty()) return absl::OkStatus();
  if (mine.shape.back() % r.ranks != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", whole.name, "' is planned on the feature layout but its last axis (",
        whole.shape.back(), ") does not divide over ", r.ranks, " ranks; re-plan it with "
        "PlanOptions::executable"));
  }
  mine.shape.back() /= r.ranks;
  return absl::OkStatus();
}

// The producer of the loss (the first output) runs on the feature layout.
bool LossOnFeatures(const graph::Graph& global, const partitioner::Plan& plan) {
  if (global.outputs().empty()) return false;
  const graph::NodeId loss = global.tensor(global.outputs()[0]).producer;
  return std::any_of(plan.layers.begin(), plan.layers.end(), [&](const auto& l) {
    return l.node == loss && l.output_layout == Layout::kFeature;
  });
}

}  // namespace

absl::Status AssignLayouts(const graph::Graph& global, const partitioner::Plan& plan,
                           RankPlan& r) {
  const std::vector<Layout> layout = TensorLayouts(global, plan);
  // Transitions first: their batch axes compare the global shapes with the local batch's.
  for (const partitioner::LayerPlan& l : plan.layers) {
    TS_ASSIGN_OR_RETURN(std::vector<InputTransition> transitions,
                        Transitions(global, l, layout, r));
    const graph::Node& node = global.node(l.node);
    const bool feature_loss = node.kind == graph::OpKind::kSoftmaxCrossEntropy &&
                              l.output_layout == Layout::kFeature;
    if (transitions.empty() && !feature_loss) continue;
    r.layout_layers.push_back({.node = l.name, .transitions = std::move(transitions),
                               .feature_loss = feature_loss});
  }
  for (TensorId t = 0; t < global.num_tensors(); ++t) {
    if (!IsActivationOrInput(global.tensor(t))) continue;
    TS_RETURN_IF_ERROR(ShapeFor(global, t, layout[t], r));
    if (layout[t] == Layout::kReplicated) r.input_batch_axis.erase(global.tensor(t).name);
  }
  r.global_loss = LossOnFeatures(global, plan);
  return absl::OkStatus();
}

}  // namespace tessera::exec::rank_plan_internal
