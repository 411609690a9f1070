// Which Gemm/MatMul layers exec's hybrid runtime runs model-parallel or late-multiply
// (exec/distributed_dense.h): one rule for the planner's executable plans and the runtime's
// check of a plan it is given.
//
//   std::string why = RuntimeDenseObstacle(graph, graph.node(n));   // "" when it can run
#pragma once

#include <string>

#include "tessera/graph/graph.h"

namespace tessera::partitioner {

// Empty when `node` is a Gemm without transA, or a MatMul, whose weight (input 1) is a 2-D
// parameter and whose bias (Gemm's input 2, if any) is a parameter of N values, each read by
// this node only; otherwise why not, in words that finish "layer X: ...".
std::string RuntimeDenseObstacle(const graph::Graph& graph, const graph::Node& node);

}  // namespace tessera::partitioner
