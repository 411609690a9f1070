// Which layers exec's hybrid runtime runs model-parallel or late-multiply
// (exec/distributed_dense.h): one rule for the planner's executable plans and the runtime's
// check of a plan it is given.
//
//   std::string why = RuntimeDenseObstacle(graph, graph.node(n), Strategy::kModelParallel);
//   if (why.empty()) ...   // the runtime can run node n model-parallel
#pragma once

#include <string>

#include "tessera/graph/graph.h"
#include "tessera/partitioner/plan.h"

namespace tessera::partitioner {

// Empty when the runtime runs `node` with `strategy` (model_parallel or late_multiply):
// - model_parallel: a Gemm without transA, a MatMul, or an Embedding (its table split along
//   the embedding dimension);
// - late_multiply: a Gemm without transA or a MatMul;
// and in each case the weight (input 1) is a 2-D parameter and the bias (Gemm's input 2, if
// any) a parameter of N values, each read by this node only. Otherwise why not, in words that
// finish "layer X: ...".
std::string RuntimeDenseObstacle(const graph::Graph& graph, const graph::Node& node,
                                 Strategy strategy);

}  // namespace tessera::partitioner
