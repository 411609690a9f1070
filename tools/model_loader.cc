#include "tessera/tools/model_loader.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/batch.h"
#include "tessera/graph/graph_json.h"
#include "tessera/graph/onnx/onnx_import.h"
#include "tessera/graph/zoo/zoo.h"

namespace tessera::tools {
namespace {

constexpr absl::string_view kZooPrefix = "zoo:";
// Zoo models that MODEL names without the prefix: the CPU-sized NMT and OCR models that train
// here. The bare name always means the model; a file of that name is passed as ./nmt.
constexpr absl::string_view kBareZooNames[] = {"nmt", "ocr"};

bool IsBareZooName(absl::string_view model) {
  for (absl::string_view name : kBareZooNames)
    if (model == name) return true;
  return false;
}

absl::StatusOr<graph::Graph> LoadGraphFile(const std::string& path, int64_t batch) {
  TS_ASSIGN_OR_RETURN(graph::Graph g, graph::ReadGraphFile(path));
  if (batch > 0) TS_RETURN_IF_ERROR(graph::SetBatch(g, batch));
  return g;
}

absl::StatusOr<graph::Graph> LoadOnnx(const std::string& path, const LoadOptions& options) {
  graph::OnnxImportOptions onnx_options;
  onnx_options.batch = options.batch;
  onnx_options.data_inputs = options.data_inputs;
  onnx_options.symbolic_dims = options.symbolic_dims;
  return graph::ImportOnnxFile(path, onnx_options);
}

// First non-blank byte of the file, or an error naming the path.
absl::StatusOr<char> FirstByte(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is a directory; pass an .onnx file, a graph .json file, zoo:NAME, "
                           "nmt or ocr"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open the file (",
                                            std::strerror(errno), ")"));
  }
  char c = 0;
  while (in.get(c)) {
    if (!std::isspace(static_cast<unsigned char>(c))) return c;
  }
  return absl::InvalidArgumentError(absl::StrCat(path, ": the file is empty"));
}

}  // namespace

void AddOnnxInputOptions(ArgParser& p, std::vector<std::string>* inputs,
                         std::vector<std::string>* dims) {
  p.AddStringList("--inputs", "NAMES", "ONNX: comma-separated names of the data inputs", inputs)
      .Default("found automatically, see docs/onnx-import.md");
  p.AddStringList("--dim", "NAME=N",
                  "ONNX: value of a symbolic dimension other than the batch, e.g. --dim seq=128 "
                  "(repeat or comma-separate)",
                  dims);
}

absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> ParseDims(
    const std::vector<std::string>& dims) {
  absl::flat_hash_map<std::string, int64_t> values;
  for (const std::string& d : dims) {
    const size_t eq = d.find('=');
    int64_t value = 0;
    if (eq == std::string::npos || eq == 0 || !absl::SimpleAtoi(d.substr(eq + 1), &value) ||
        value < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--dim takes NAME=VALUE with a whole number VALUE >= 1 (e.g. --dim seq=128); got '", d,
          "'"));
    }
    values[d.substr(0, eq)] = value;
  }
  return values;
}

absl::StatusOr<graph::Graph> LoadModel(const std::string& model, const LoadOptions& options) {
  if (model.empty()) {
    return absl::InvalidArgumentError(
        "no model given; pass an .onnx file, a graph .json file, zoo:NAME, nmt or ocr");
  }
  const bool is_bare = IsBareZooName(model);
  const bool is_zoo = is_bare || absl::StartsWith(model, kZooPrefix);
  bool is_json = absl::EndsWith(model, ".json");
  if (!is_zoo && !is_json && !absl::EndsWith(model, ".onnx")) {
    TS_ASSIGN_OR_RETURN(char first, FirstByte(model));
    is_json = first == '{';
  }
  if ((is_zoo || is_json) && !options.data_inputs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(model, ": --inputs applies to ONNX models only"));
  }
  if ((is_zoo || is_json) && !options.symbolic_dims.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(model, ": --dim applies to ONNX models only"));
  }
  if (is_zoo) {
    const std::string name = is_bare ? model : model.substr(kZooPrefix.size());
    return graph::zoo::BuildZooModel(name, options.batch);
  }
  if (is_json) return LoadGraphFile(model, options.batch);
  return LoadOnnx(model, options);
}

}  // namespace tessera::tools
