#include "tessera/graph/batch.h"

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/shape_inference.h"

namespace tessera::graph {

int64_t GraphBatch(const Graph& graph) {
  for (const Tensor& t : graph.tensors()) {
    if (t.role == TensorRole::kInput && t.batch_axis >= 0 &&
        t.batch_axis < static_cast<int64_t>(t.shape.size())) {
      return t.shape[t.batch_axis];
    }
  }
  return 0;
}

absl::Status SetBatch(Graph& graph, int64_t batch) {
  if (batch < 1) {
    return absl::InvalidArgumentError(absl::StrCat("batch must be at least 1, got ", batch));
  }
  Graph updated = graph;
  for (TensorId id : updated.TensorsWithRole(TensorRole::kInput)) {
    Tensor& t = updated.mutable_tensor(id);
    if (t.batch_axis >= 0 && t.batch_axis < static_cast<int64_t>(t.shape.size())) {
      t.shape[t.batch_axis] = batch;
    }
  }
  absl::Status status = InferShapes(updated);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot change the batch of graph '",
                                                   graph.name(), "' to ", batch, ": ",
                                                   status.message()));
  }
  graph = std::move(updated);
  return absl::OkStatus();
}

}  // namespace tessera::graph
