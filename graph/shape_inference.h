// Shape inference for every op of the catalogue.
//
//   TS_RETURN_IF_ERROR(InferShapes(graph));   // fills every activation's shape and dtype
//
// A shape error names the node, its op, its input shapes and what was expected:
//   node 'fc1' (Gemm) with inputs A [32,4096] f32, B [1000,4000] f32:
//   inner dimensions differ: op(A) is [32,4096], op(B) is [4000,1000]
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tessera/graph/graph.h"

namespace tessera::graph {

struct TensorType {
  Shape shape;
  DType dtype = DType::kF32;
  bool operator==(const TensorType&) const = default;
};

// Output types of one node from its inputs' shapes and its attributes.
absl::StatusOr<std::vector<TensorType>> InferOutputTypes(const Graph& graph, const Node& node);

// Infers every node in topological order and writes the output tensors' shapes
// and dtypes.
absl::Status InferShapes(Graph& graph);

}  // namespace tessera::graph
