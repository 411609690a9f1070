// Loads the MODEL argument of the `tessera` subcommands.
//
//   absl::StatusOr<Graph> g = LoadModel("zoo:resnet50", {.batch = 64});
//   absl::StatusOr<Graph> h = LoadModel("exported.onnx", {});
//   absl::StatusOr<Graph> k = LoadModel("saved.json", {.batch = 8});
//   absl::StatusOr<Graph> n = LoadModel("nmt", {});              // = zoo:nmt, batch 32
//
// MODEL is `zoo:NAME` (graph/zoo/zoo.h), an ONNX file (.onnx) or a Tessera graph
// file (.json, docs/graph-format.md). A file with another extension is sniffed:
// a leading '{' means a graph file, anything else is tried as ONNX. `nmt` and
// `ocr`, the CPU-sized versions of zoo:gnmt and zoo:crnn that train on this
// machine, need no prefix (a file called nmt is passed as ./nmt).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "tessera/graph/graph.h"
#include "tessera/tools/cli/arg_parser.h"

namespace tessera::tools {

struct LoadOptions {
  int64_t batch = 0;                     // 0: the model's own
  std::vector<std::string> data_inputs;  // ONNX only: names of the data inputs
  absl::flat_hash_map<std::string, int64_t> symbolic_dims;  // ONNX only: {"seq", 32}
};

// --inputs NAMES and --dim NAME=N, the ONNX options of every command that loads a MODEL.
void AddOnnxInputOptions(ArgParser& p, std::vector<std::string>* inputs,
                         std::vector<std::string>* dims);

// Parses --dim arguments of the form NAME=VALUE (VALUE a whole number >= 1).
absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> ParseDims(
    const std::vector<std::string>& dims);

absl::StatusOr<graph::Graph> LoadModel(const std::string& model, const LoadOptions& options);

}  // namespace tessera::tools
