// The graph file: a whole graph as versioned JSON text (docs/graph-format.md).
//
//   TS_RETURN_IF_ERROR(WriteGraphFile(graph, "model.json"));     // atomic write
//   TS_ASSIGN_OR_RETURN(Graph loaded, ReadGraphFile("model.json"));
//   // `loaded` equals `graph`: tensors (shapes, dtypes, roles, data), nodes with
//   // their attributes, and outputs; doubles round-trip exactly.
//
// Reading validates the graph and runs shape inference; every error names the
// file and the offending field, e.g.
//   model.json: nodes[3] ("conv1").attrs.strides: expected an array of integers, got "2"
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tessera/graph/graph.h"

namespace tessera::graph {

// Pretty-printed JSON text of the whole graph (format documented in docs/graph-format.md).
std::string GraphToJson(const Graph& graph);
// Parses and validates; `source_name` (a path, usually) is named in every error.
absl::StatusOr<Graph> GraphFromJson(absl::string_view text, absl::string_view source_name);
// Writes atomically (temporary file in the same folder, then rename); never leaves a partial file.
absl::Status WriteGraphFile(const Graph& graph, const std::string& path);
absl::StatusOr<Graph> ReadGraphFile(const std::string& path);

}  // namespace tessera::graph
