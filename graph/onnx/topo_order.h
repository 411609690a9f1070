// Internal to ONNX import: ordering an ONNX graph's nodes so each comes after
// the producers of its inputs (ONNX requires it; hostile or hand-edited files
// may not comply).
//
//   TS_ASSIGN_OR_RETURN(std::vector<int> order, TopologicalNodeOrder(model.graph(), defined));
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace tessera::graph::onnx_import {

// Node indices in dependency order; the file's order when it already is one.
// `external` holds the graph inputs and initializers. Errors name the node: a
// value produced twice, an input nothing produces, a cycle.
absl::StatusOr<std::vector<int>> TopologicalNodeOrder(
    const onnx::GraphProto& graph, const absl::flat_hash_set<std::string>& external);

// "name" of a node for messages before it is imported: its name, or "Op_index" (the name the importer gives it).
std::string DescribeNode(const onnx::NodeProto& node, int index);

}  // namespace tessera::graph::onnx_import
