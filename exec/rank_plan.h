// One rank's share of a partition plan: its graph (the model at the local batch, with the
// weights of model-parallel layers cut to the rank's shard), the layers it runs with
// collectives, and how its data and parameters relate to the single-worker model's.
//
//   TS_ASSIGN_OR_RETURN(Plan plan, PlanModel(graph, cluster, cost, {.devices = 4,
//                                                                   .executable = true}));
//   TS_ASSIGN_OR_RETURN(RankPlan mine, BuildRankPlan(graph, plan, comm.rank(), comm.size()));
//   mine.graph;                  // batch / 4, model-parallel weights [K, N / 4]
//   mine.dense;                  // the model-parallel and late-multiply layers
//   mine.params.at("fc.weight")  // where the shard sits in the whole parameter
//
// Supported plans are those PlanModel makes with `executable` (docs/partitioner.md): layers
// data_parallel; Gemm/MatMul layers with a 2-D weight model_parallel (weight split along the
// output features; Y left on the batch or, for feature-split consumers, on the feature layout)
// or late_multiply; model_parallel Embeddings; element-wise layers and a SoftmaxCrossEntropy
// on the feature layout (partitioner/runtime_feature.h). A layer reading an input in another
// layout than its producer left it in changes it itself (`layout_layers`). Anything else is an
// InvalidArgument naming the layer and saying to re-plan with `--executable`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/graph/graph.h"
#include "tessera/partitioner/layout.h"
#include "tessera/partitioner/plan.h"

namespace tessera::exec {

// Where a rank's parameter sits in the whole (single-worker) parameter: `count` slices of
// `axis`, from `begin`. Replicated parameters: the whole (count = the whole axis 0).
struct ParamShard {
  graph::Shape global_shape;
  int axis = 0;
  int64_t begin = 0, count = 0;
  bool sharded = false;
  bool synced = false;  // data-parallel: its gradient is all-reduced over the ranks
};

// A model-parallel or late-multiply Gemm/MatMul on this rank.
struct DenseLayer {
  std::string node;
  partitioner::Strategy strategy = partitioner::Strategy::kModelParallel;
  int x_batch_axis = 0;  // the axis of X (and Y) split over the ranks
  int64_t planned_bytes = 0;  // what the plan says this layer sends per step
};

// An input a layer reads in another layout than its producer left it in: the change the
// layer makes forward (a collective or a local slice) and its transpose backward.
struct InputTransition {
  int input = 0;  // index into node.inputs
  partitioner::Layout from = partitioner::Layout::kBatch, to = partitioner::Layout::kBatch;
  int from_axis = -1, to_axis = -1;  // the axis each layout splits over the ranks; -1: whole
  bool partial = false;  // the layer's gradient of this input is a partial sum over the ranks
};

// A layer that changes the layout of an input, runs on the feature layout with collectives of
// its own (the vocabulary-parallel loss), or both (exec/layout_node.h).
struct LayoutLayer {
  std::string node;
  std::vector<InputTransition> transitions;
  bool feature_loss = false;  // SoftmaxCrossEntropy over logits split along the classes
};

struct RankPlan {
  int rank = 0, ranks = 1;
  int64_t global_batch = 0, local_batch = 0;
  graph::Graph graph;
  std::vector<DenseLayer> dense;
  std::vector<LayoutLayer> layout_layers;
  // The loss is computed over the whole batch, split along the classes: each rank's is its
  // share of the global loss (they add up) and its gradient is seeded with 1.
  bool global_loss = false;
  std::map<std::string, ParamShard> params;     // every parameter, by name
  std::map<std::string, int> input_batch_axis;  // data inputs split over the ranks, by name
};

// `global` has shapes inferred at the plan's global batch; `plan` was made for `ranks`
// devices. InvalidArgument naming the layer or value for a plan the runtime cannot run, a
// batch that does not divide, or a model whose batch is baked into an attribute.
absl::StatusOr<RankPlan> BuildRankPlan(const graph::Graph& global, const partitioner::Plan& plan,
                                       int rank, int ranks);

// Elements [begin, begin + count) along `axis` of a row-major tensor of `shape`.
template <typename T>
std::vector<T> SliceAxis(const std::vector<T>& whole, const graph::Shape& shape, int axis,
                         int64_t begin, int64_t count) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  std::vector<T> out;
  out.reserve(outer * count * inner);
  for (int64_t o = 0; o < outer; ++o) {
    const T* row = whole.data() + (o * shape[axis] + begin) * inner;
    out.insert(out.end(), row, row + count * inner);
  }
  return out;
}

// The rank's values of a parameter from the whole one (its slice along the shard's axis).
std::vector<float> SliceParameter(const ParamShard& shard, const std::vector<float>& whole);

}  // namespace tessera::exec
