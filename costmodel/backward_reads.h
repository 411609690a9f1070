// What the backward pass of each node reads, and which tensors need a gradient: the facts a
// lifetime analysis of a training step needs (memory/lifetime.h), from the same rules the
// per-op estimates use (docs/estimates.md).
//
//   TS_RETURN_IF_ERROR(graph::InferShapes(g));
//   BackwardInfo b = AnalyzeBackward(g);
//   b.nodes[conv].has_backward;     // some input of the conv needs a gradient
//   b.nodes[conv].reads;            // {x}: dW = x^T * dY reads the conv's input
//   b.nodes[pool].private_bytes;    // the arg-max indices MaxPool saves for itself
//   b.needs_grad[x];                // false for data inputs, constants and integer tensors
//   b.derivation[transpose_w];      // true: re-lays out a weight (graph/parameters.h)
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/graph/graph.h"

namespace tessera::costmodel {

struct NodeBackward {
  // Inputs and outputs of the node that its backward reads (parameters and constants
  // included), each once, in the order the estimate names them; empty without a backward.
  std::vector<graph::TensorId> reads;
  // Bytes of the masks, indices and statistics the node saves itself for its backward.
  int64_t private_bytes = 0;
  // Some input of the node needs a gradient, so the node has a backward step.
  bool has_backward = false;
};

struct BackwardInfo {
  std::vector<NodeBackward> nodes;  // by NodeId
  std::vector<bool> needs_grad;     // by TensorId: floating and computed from a parameter
  std::vector<bool> derivation;     // by NodeId: a parameter derivation (graph/parameters.h)
};

// Shapes must be inferred (graph::InferShapes); with a cycle, node order stands in for the
// topological order.
BackwardInfo AnalyzeBackward(const graph::Graph& g);

}  // namespace tessera::costmodel
