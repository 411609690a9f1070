// ONNX import: reads an ONNX model (opsets 11 to 17) into a Tessera graph with
// every shape static. Shape-computing subgraphs (Shape, Gather, Concat, Range,
// ...) are folded at import time; parameters are recognised whether they arrive
// as initializers or, in structure-only exports (export_params=False), as graph
// inputs. docs/onnx-import.md lists the supported ops and the rules.
//
//   OnnxImportOptions options;
//   options.batch = 64;                                   // re-derive every shape for batch 64
//   TS_ASSIGN_OR_RETURN(Graph g, ImportOnnxFile("resnet50.onnx", options));
//   g.TensorsWithRole(TensorRole::kParameter);            // conv weights, BN scales, ...
//
// Errors name the file and the node or value at fault, e.g.
//   model.onnx: 2 unsupported op types: TopK (node "/TopK"), NonZero (node "/NonZero");
//   supported ops are listed in docs/onnx-import.md
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tessera/graph/graph.h"

namespace tessera::graph {

struct OnnxImportOptions {
  // > 0: replace the batch dimension of every data input (the dimension named
  // like "batch" when the input has symbolic dimensions, else the leading one;
  // see docs/onnx-import.md) before folding, so every shape is re-derived. In a static
  // export, constants baked from the tracing batch are rewritten where they provably hold
  // the batch, an error naming the node and what to do elsewhere ("Static exports").
  // 0: keep the file's batch; a symbolic batch dimension then becomes 1.
  int64_t batch = 0;
  // Names of the data inputs; empty: decided automatically (an input is a
  // parameter when it reaches a weight slot of some op, see the docs).
  std::vector<std::string> data_inputs;
  // Values of other symbolic dimensions (ONNX dim_param), e.g. {"seq", 32}.
  absl::flat_hash_map<std::string, int64_t> symbolic_dims;
};

absl::StatusOr<Graph> ImportOnnxFile(const std::string& path,
                                     const OnnxImportOptions& options = {});
absl::StatusOr<Graph> ImportOnnxBytes(absl::string_view bytes, absl::string_view source_name,
                                      const OnnxImportOptions& options = {});

}  // namespace tessera::graph
