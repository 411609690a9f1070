// Per-op estimates: forward and backward FLOPs, parameters, bytes moved, and the
// activation bytes each op keeps for backward. Every convention is in docs/estimates.md.
//
//   TS_RETURN_IF_ERROR(graph::InferShapes(g));
//   GraphEstimate e = EstimateGraph(g);
//   e.flops_forward;                    // one forward pass over the whole batch
//   e.params;                           // distinct parameters, once each
//   e.ops[conv_id].flops_backward;      // dX (if X needs a gradient) + dW + dB
//   OpEstimate one = EstimateOp(g, conv_id);   // the same numbers for one node
//
// FLOPs: 2 per multiply-add in convolutions, matrix products and recurrent cells, 1 per
// output element in element-wise ops; parameter derivations (graph/parameters.h) cost 0.
// A tensor kept for backward is counted once in the graph total: in the activation_bytes
// of the node that produces it, or, for a data input, in the graph's data-input share.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/graph/graph.h"

namespace tessera::costmodel {

struct OpEstimate {
  double flops_forward = 0;     // one forward pass of the node over the whole batch
  double flops_backward = 0;    // gradients w.r.t. inputs that need them and w.r.t. parameters
  int64_t params = 0;           // elements of the distinct parameters this node uses (directly or via derivations)
  int64_t bytes_read = 0;       // forward: bytes of all inputs read
  int64_t bytes_written = 0;    // forward: bytes of all outputs written
  int64_t activation_bytes = 0; // bytes of THIS node's outputs that must be kept for backward
};

struct GraphEstimate {
  std::vector<OpEstimate> ops;  // indexed by NodeId
  double flops_forward = 0, flops_backward = 0;
  int64_t params = 0;           // CountParameters(graph): distinct parameters once
  int64_t activation_bytes = 0; // sum over ops, plus data inputs kept for backward
  int64_t bytes_read = 0, bytes_written = 0;
};

// Shapes must be inferred (graph::InferShapes). Each call analyses the whole graph once;
// to estimate every node, call EstimateGraph.
OpEstimate EstimateOp(const graph::Graph& graph, graph::NodeId node);
GraphEstimate EstimateGraph(const graph::Graph& graph);

}  // namespace tessera::costmodel
