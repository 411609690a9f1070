// Internal to ONNX import: deciding which graph inputs are data, parameters or
// non-trained state, on the imported graph (where every shape is known).
//
//   RoleRules rules{.data_inputs = {"tokens"}};
//   auto roles = ClassifyCandidates(graph, importer.candidates(), rules);
//   ApplyRoles(graph, roles);
//   TS_RETURN_IF_ERROR(GatherToEmbedding(graph));
//
// The rule (docs/onnx-import.md): follow each candidate forward through weight
// re-layouts (Identity, Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Slice,
// Concat, Split, Cast, Expand, Dropout) to the ops that use it. It is a parameter
// when one use is a weight slot: Conv W/B, Gemm B/C, LSTM W/R/B,
// BatchNormalization scale/bias, LayerNormalization scale/bias, Gather data, the B
// operand of MatMul when 2-D, or an operand of MatMul/Add/Sub/Mul/Div/Pow/Where
// that has no batch dimension next to the other operand (lower rank, or a leading
// 1 where the other's leading dimension is not 1). It is non-trained state
// (kConstant) when its only such uses are BatchNormalization mean/var. Otherwise
// it is a data input. Integer and bool inputs and inputs with a symbolic dimension
// are always data.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "tessera/graph/graph.h"
#include "tessera/graph/onnx/importer.h"

namespace tessera::graph::onnx_import {

struct RoleRules {
  // User override: exactly these graph inputs are data (empty: automatic).
  absl::flat_hash_set<std::string> data_inputs;
  // Inputs that are data whatever their uses (symbolic dimensions).
  absl::flat_hash_set<std::string> forced_data;
};

// Role of every candidate, by tensor name.
absl::flat_hash_map<std::string, TensorRole> ClassifyCandidates(
    const Graph& graph, const std::vector<Candidate>& candidates, const RoleRules& rules);

// Sets the roles of the named tensors.
void ApplyRoles(Graph& graph, const absl::flat_hash_map<std::string, TensorRole>& roles);

// Gather(table, ids) on axis 0 of a 2-D parameter table (directly or through
// Identity) with integer ids becomes Embedding(ids, table).
void GatherToEmbedding(Graph& graph);

}  // namespace tessera::graph::onnx_import
