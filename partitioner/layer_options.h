// The strategies one layer admits and what each costs (docs/partitioner.md,
// "Strategies" gives every formula).
//
//   std::vector<LayerOption> options = BuildLayerOptions(graph, estimate.ops[n], layer, problem);
//   options[FindOption(layer, Strategy::kLateMultiply)].sync_bytes;   // |X| + |dY|
#pragma once

#include <vector>

#include "tessera/costmodel/op_estimate.h"
#include "tessera/graph/graph.h"
#include "tessera/partitioner/problem.h"

namespace tessera::partitioner {

// Dense layers: data_parallel, model_parallel (when the output features >= P > 1),
// late_multiply (Gemm / MatMul with a 2-D weight, P > 1). LSTM: data_parallel.
// Other layers with parameters: data_parallel (batch) or replicated. Parameterless
// layers: batch, replicated, and feature where the op keeps the feature axis.
// `problem` supplies the edges (already built), the devices and the cost model.
std::vector<LayerOption> BuildLayerOptions(const graph::Graph& graph,
                                           const costmodel::OpEstimate& estimate,
                                           const Layer& layer, const Problem& problem);

// Seconds per byte of a bucketed gradient all-reduce (a full bucket's time / its size).
double BucketedAllReduceRate(const Problem& problem);

}  // namespace tessera::partitioner
