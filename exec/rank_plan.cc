// BuildRankPlan (rank_plan.h): the model at the local batch, then each layer of the plan checked
// against what the runtime runs and the model-parallel weights cut to the rank's shard.
#include "tessera/exec/rank_plan.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/setting_error.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/batch.h"
#include "tessera/exec/rank_plan_impl.h"
#include "tessera/partitioner/runtime_dense.h"
#include "tessera/partitioner/runtime_feature.h"

namespace tessera::exec {

namespace rank_plan_internal {

absl::Status LayerError(const partitioner::LayerPlan& l, absl::string_view what) {
  return base::SettingError(
      absl::InvalidArgumentError(absl::StrCat(
          "layer '", l.name, "' (", l.op, ", ", partitioner::StrategyName(l.strategy), "): ",
          what, ". The runtime runs plans made with PlanOptions::executable "
          "(docs/partitioner.md)")),
      "executable");
}

int SplitAxis(const graph::Shape& global, const graph::Shape& local, int ranks) {
  if (global == local) return -1;
  if (global.size() != local.size()) return -2;
  int axis = -1;
  for (size_t d = 0; d < global.size(); ++d) {
    if (global[d] == local[d]) continue;
    if (axis >= 0 || global[d] != local[d] * ranks) return -2;
    axis = static_cast<int>(d);
  }
  return axis;
}

}  // namespace rank_plan_internal

namespace {

using rank_plan_internal::LayerError;
using rank_plan_internal::AssignLayouts;
using rank_plan_internal::SplitAxis;

using graph::TensorId;
using partitioner::Layout;
using partitioner::Strategy;

// Checks a model-parallel or late-multiply Gemm/MatMul/Embedding; cuts a model-parallel one's
// weight and bias to the rank's output features. Its parameters are formed whole on each rank
// (late multiply) or are shards: none is all-reduced.
absl::Status ShardDenseWeights(const graph::Graph& global, const partitioner::LayerPlan& l,
                               RankPlan& r) {
  const graph::Node& node = global.node(l.node);
  if (std::string why = partitioner::RuntimeDenseObstacle(global, node, l.strategy); !why.empty()) {
    return LayerError(l, why);
  }
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    if (node.inputs[i] != graph::kNoTensor) {
      r.params[global.tensor(node.inputs[i]).name].synced = false;
    }
  }
  if (l.strategy != Strategy::kModelParallel) return absl::OkStatus();
  const graph::Shape& y = global.tensor(node.outputs[0]).shape;
  const int64_t n = y.back();
  if (n % r.ranks != 0) {
    return LayerError(l, absl::StrCat("its ", n, " output features do not divide over ", r.ranks,
                                      " ranks"));
  }
  const bool rows = node.kind == graph::OpKind::kGemm &&
                    std::get<graph::GemmAttrs>(node.attrs).trans_b;
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    const TensorId t = node.inputs[i];
    if (t == graph::kNoTensor) continue;
    graph::Tensor& w = r.graph.mutable_tensor(t);
    const int shard_axis = i == 1 ? (rows ? 0 : 1) : static_cast<int>(w.shape.size()) - 1;
    ParamShard& s = r.params[w.name];
    s.axis = shard_axis;
    s.count = n / r.ranks;
    s.begin = r.rank * s.count;
    s.sharded = true;
    w.shape[shard_axis] = s.count;
  }
  return absl::OkStatus();
}

// A model-parallel layer that reads and writes the batch layout (its collectives folded in,
// distributed_dense.h), or a late-multiply one.
absl::Status AddDenseLayer(const graph::Graph& global, const partitioner::LayerPlan& l,
                           RankPlan& r) {
  TS_RETURN_IF_ERROR(ShardDenseWeights(global, l, r));
  const graph::Node& node = global.node(l.node);
  const TensorId x = node.inputs[0];
  const int axis = SplitAxis(global.tensor(x).shape, r.graph.tensor(x).shape, r.ranks);
  if (axis < 0 || (node.kind == graph::OpKind::kGemm && axis != 0)) {
    return LayerError(l, absl::StrCat("its input '", global.tensor(x).name,
                                      "' is not split along one batch axis"));
  }
  r.dense.push_back({.node = l.name, .strategy = l.strategy, .x_batch_axis = axis,
                     .planned_bytes = l.comm_bytes});
  return absl::OkStatus();
}

// A layer whose output is left on the feature layout: a model-parallel Gemm/MatMul (weights
// cut; its input is read whole) or a parameterless layer the runtime splits along the last
// axis.
absl::Status AddFeatureLayer(const graph::Graph& global, const partitioner::LayerPlan& l,
                             RankPlan& r) {
  const graph::Node& node = global.node(l.node);
  const bool dense = node.kind == graph::OpKind::kGemm || node.kind == graph::OpKind::kMatMul;
  if (dense) return ShardDenseWeights(global, l, r);
  if (!l.param_names.empty()) {
    return LayerError(l, "a layer with parameters runs on the feature layout only as a "
                         "model-parallel Gemm or MatMul");
  }
  if (std::string why = partitioner::RuntimeFeatureObstacle(global, node, r.ranks);
      !why.empty()) {
    return LayerError(l, why);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RankPlan> BuildRankPlan(const graph::Graph& global, const partitioner::Plan& plan,
                                       int rank, int ranks) {
  if (plan.devices != ranks) {
    return absl::InvalidArgumentError(absl::StrCat("the plan of model '", global.name(),
                                                   "' is for ", plan.devices,
                                                   " devices; run it with ", plan.devices,
                                                   " workers or re-plan for ", ranks));
  }
  RankPlan r{.rank = rank, .ranks = ranks, .global_batch = graph::GraphBatch(global),
             .graph = global};
  if (r.global_batch <= 0 || r.global_batch % ranks != 0) {
    return absl::InvalidArgumentError(absl::StrCat("the global batch ", r.global_batch,
                                                   " of model '", global.name(),
                                                   "' does not divide over ", ranks, " workers"));
  }
  r.local_batch = r.global_batch / ranks;
  if (absl::Status s = graph::SetBatch(r.graph, r.local_batch); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", global.name(), "' cannot run at the local batch ", r.local_batch, " (",
        r.global_batch, " over ", ranks, " workers): ", s.message(),
        ". Build it so that no attribute bakes in the batch (e.g. Reshape with -1)"));
  }
  for (TensorId t = 0; t < global.num_tensors(); ++t) {
    const graph::Tensor& x = global.tensor(t);
    if (x.role == graph::TensorRole::kParameter) {
      r.params[x.name] = {.global_shape = x.shape, .count = x.shape.empty() ? 1 : x.shape[0],
                          .synced = ranks > 1};
    }
    if (x.role != graph::TensorRole::kInput) continue;
    const int axis = SplitAxis(x.shape, r.graph.tensor(t).shape, ranks);
    if (axis == -2) {
      return absl::InvalidArgumentError(absl::StrCat("data input '", x.name, "' of model '",
                                                     global.name(), "' changes shape in more "
                                                     "than its batch axis at the local batch"));
    }
    if (axis >= 0) r.input_batch_axis[x.name] = axis;
  }
  for (const partitioner::LayerPlan& l : plan.layers) {
    if (l.node < 0 || l.node >= global.num_nodes() || global.node(l.node).name != l.name) {
      return absl::InvalidArgumentError(absl::StrCat("the plan's layer '", l.name,
                                                     "' is not a node of model '", global.name(),
                                                     "'; was the plan made for another model?"));
    }
    if (l.output_layout == Layout::kFeature) {
      if (l.strategy != Strategy::kModelParallel) {
        return LayerError(l, "only model-parallel layers leave their output on the feature layout");
      }
      TS_RETURN_IF_ERROR(AddFeatureLayer(global, l, r));
      continue;
    }
    switch (l.strategy) {
      case Strategy::kDataParallel: break;
      case Strategy::kReplicated: return LayerError(l, "replicated layers are not run");
      case Strategy::kModelParallel:
      case Strategy::kLateMultiply: TS_RETURN_IF_ERROR(AddDenseLayer(global, l, r)); break;
    }
    if (l.output_layout != Layout::kBatch) {
      return LayerError(l, absl::StrCat("its output is planned ", LayoutName(l.output_layout),
                                        "; the runtime leaves it on the batch or feature layout"));
    }
  }
  TS_RETURN_IF_ERROR(AssignLayouts(global, plan, r));
  return r;
}

std::vector<float> SliceParameter(const ParamShard& shard, const std::vector<float>& whole) {
  if (!shard.sharded) return whole;
  return SliceAxis(whole, shard.global_shape, shard.axis, shard.begin, shard.count);
}

}  // namespace tessera::exec
