// Which parameterless layers exec's hybrid runtime runs on the feature layout (the last axis
// split over the ranks, exec/layout_node.h): one rule for the planner's executable plans and
// the runtime's check of a plan it is given.
//
//   std::string why = RuntimeFeatureObstacle(graph, graph.node(n), /*devices=*/4);
//   if (why.empty()) ...   // the runtime can run node n on the feature layout
#pragma once

#include <string>

#include "tessera/graph/graph.h"

namespace tessera::partitioner {

// Empty when the runtime runs `node` with its activations split along the last axis over
// `devices` ranks:
// - an element-wise op whose inputs each have the output's shape or hold one value;
// - a SoftmaxCrossEntropy over 2-D logits [rows, classes] with mean or sum reduction (the
//   vocabulary-parallel loss: one all-reduce of the rows' max and one of their sums);
// and in each case `devices` divides the last axis. Otherwise why not, in words that finish
// "layer X: ...".
std::string RuntimeFeatureObstacle(const graph::Graph& graph, const graph::Node& node,
                                   int devices);

}  // namespace tessera::partitioner
