// Graph files on disk: atomic writes and size-capped reads (base/file_io.h), with
// errors that name the path and the OS reason.
#include <cstdint>
#include <string>

#include "tessera/base/file_io.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/graph_json.h"

namespace tessera::graph {
namespace {

// Graph files hold structure and small constants; anything larger is not one.
constexpr int64_t kMaxFileBytes = int64_t{1} << 30;

}  // namespace

absl::Status WriteGraphFile(const Graph& graph, const std::string& path) {
  return base::WriteFileAtomically(path, GraphToJson(graph), "graph file");
}

absl::StatusOr<Graph> ReadGraphFile(const std::string& path) {
  TS_ASSIGN_OR_RETURN(const std::string text, base::ReadFileText(path, "graph file", kMaxFileBytes));
  return GraphFromJson(text, path);
}

}  // namespace tessera::graph
