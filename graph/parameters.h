// Which parameters each tensor is computed from, and the parameter count of a graph.
//
//   std::vector<std::vector<TensorId>> sources = ParameterSources(graph);
//   sources[w]        == {w}            // a parameter is its own source
//   sources[w_t]      == {w}            // w_t = Transpose(w): a weight re-layout
//   sources[b]        == {b_ih, b_hh}   // b = Add(b_ih, b_hh): an LSTM bias sum
//   sources[y]        == {}             // y = MatMul(x, w_t) depends on data
//   IsParameterDerivation(graph, transpose_node, sources);   // true
//   CountParameters(graph);             // elements of every parameter, once each
//
// A parameter derivation is a node whose inputs are all parameters, constants or
// parameter-derived tensors and that reads at least one of the parameter kind. It
// re-lays out weights (ONNX exports Slice/Concat/Unsqueeze/Transpose LSTM weights,
// alias a tied weight with Identity, sum two biases) instead of computing on data.
// A node that reads only constants is not one: constant subgraphs are expected to be
// folded by importers, and such a node is costed like any other.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/graph/graph.h"

namespace tessera::graph {

// For each tensor (indexed by TensorId): the distinct parameter tensors it is computed from
// through parameter derivations, sorted by id; a parameter's own entry is itself; empty for
// inputs, constants and tensors that depend on data.
std::vector<std::vector<TensorId>> ParameterSources(const Graph& graph);

// True for a node all of whose inputs are parameters, constants or parameter-derived tensors
// and which reads at least one parameter or parameter-derived tensor. `sources` is
// ParameterSources(graph).
bool IsParameterDerivation(const Graph& graph, NodeId node,
                           const std::vector<std::vector<TensorId>>& sources);

// Elements of all distinct trainable parameters (tensors of role kParameter), each counted
// once however many nodes read it; saturates at INT64_MAX.
int64_t CountParameters(const Graph& graph);

// Elements of the distinct parameters in `params` (ids of parameter tensors), each once.
int64_t CountParameterElements(const Graph& graph, const std::vector<TensorId>& params);

}  // namespace tessera::graph
