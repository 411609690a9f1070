// libFuzzer target: the graph file reader (graph/graph_json.h) on arbitrary text.
// Errors must be clean Statuses naming the source; an accepted graph must pass
// CheckLoadedGraph (validation, inference, round trip, estimates).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "tessera/base/check.h"
#include "tessera/fuzz/verbose.h"
#include "tessera/fuzz/graph_checks.h"
#include "tessera/graph/graph_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tessera::graph::Graph> g = tessera::graph::GraphFromJson(text, "fuzz.json");
  tessera::fuzz::Verbose(g.status());
  if (!g.ok()) {
    TS_CHECK(absl::StartsWith(g.status().message(), "fuzz.json: "))
        << "error does not name the file: " << g.status();
    return 0;
  }
  tessera::fuzz::CheckLoadedGraph(*g);
  tessera::fuzz::PlanLoadedGraph(*g);
  return 0;
}
