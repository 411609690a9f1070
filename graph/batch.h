// The batch of a graph: the batch dimension of its data inputs (Tensor::batch_axis,
// the leading one unless the model is sequence-first).
//
//   int64_t b = GraphBatch(graph);            // e.g. 32; 0 when the graph has no data input
//   TS_RETURN_IF_ERROR(SetBatch(graph, 64));  // every data input's leading dim -> 64, shapes re-inferred
//
// ONNX import applies its batch before folding shape subgraphs (graph/onnx/onnx_import.h);
// SetBatch serves graphs that are already folded (builder graphs, graph files).
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "tessera/graph/graph.h"

namespace tessera::graph {

// The batch dimension of the first data input (TensorRole::kInput) that has one.
int64_t GraphBatch(const Graph& graph);

// Replaces the batch dimension of every data input that has one by `batch` and
// re-infers all shapes. An LSTM's initial states that are constants with one value throughout
// (a static export's zero states) follow the new batch. On error (batch < 1, or a node whose
// attributes bake in the old batch, e.g. a Reshape to a fixed shape) the graph is left
// unchanged.
absl::Status SetBatch(Graph& graph, int64_t batch);

}  // namespace tessera::graph
