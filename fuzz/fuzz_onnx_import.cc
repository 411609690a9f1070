// libFuzzer target: the ONNX importer (graph/onnx/onnx_import.h) on arbitrary bytes,
// at the file's own batch and again at batch 3 (the second import pass). Errors must be
// clean Statuses naming the source; an accepted graph must pass CheckLoadedGraph.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "tessera/base/check.h"
#include "tessera/fuzz/verbose.h"
#include "tessera/fuzz/graph_checks.h"
#include "tessera/graph/onnx/onnx_import.h"

namespace {

// Imports with `batch` (0: the file's); true when a graph came out.
bool ImportAndCheck(absl::string_view bytes, int64_t batch) {
  tessera::graph::OnnxImportOptions options;
  options.batch = batch;
  options.symbolic_dims["seq"] = 8;  // the test models' sequence dimension
  absl::StatusOr<tessera::graph::Graph> g =
      tessera::graph::ImportOnnxBytes(bytes, "fuzz.onnx", options);
  tessera::fuzz::Verbose(g.status());
  if (!g.ok()) {
    TS_CHECK(absl::StartsWith(g.status().message(), "fuzz.onnx: "))
        << "error does not name the file: " << g.status();
    return false;
  }
  tessera::fuzz::CheckLoadedGraph(*g);
  tessera::fuzz::PlanLoadedGraph(*g);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (ImportAndCheck(bytes, 0)) ImportAndCheck(bytes, 3);
  return 0;
}
