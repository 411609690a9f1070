// Initial values of a graph's parameters and constants, from a seed, following PyTorch's
// defaults so that models train as their PyTorch copies do.
//
//   TS_ASSIGN_OR_RETURN(std::vector<float> w, InitialValues(graph, weight_id, /*seed=*/1));
//
// Parameters, by the first op that reads them and the input slot:
// - Conv weight, Gemm/MatMul matrix: uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in the
//   inputs summed per output (kaiming_uniform with a = sqrt(5), PyTorch's default);
// - LSTM W, R and B: uniform(-1/sqrt(H), 1/sqrt(H));
// - Embedding table: normal(0, 1);
// - batch/layer norm scale: 1;
// - a vector read first by Mul, Div or MatMul (a gain, an attention vector):
//   uniform(-1/sqrt(n), 1/sqrt(n));
// - every other parameter (biases, norm shifts): 0.
// Constants carry their values when the graph has them (Tensor::data); otherwise zeros, and
// ones for a batch norm's running variance.
// The values depend only on (seed, tensor name), so a graph re-built or re-ordered starts the
// same, and every rank of a parallel job draws the same weights.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "tessera/graph/graph.h"

namespace tessera::exec {

// `tensor` is a parameter or constant of `graph` with inferred shape.
absl::StatusOr<std::vector<float>> InitialValues(const graph::Graph& graph,
                                                 graph::TensorId tensor, uint64_t seed);

}  // namespace tessera::exec
