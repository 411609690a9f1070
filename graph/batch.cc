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

namespace {

// Every element of a constant the same (Tensor::data repeats cyclically; empty is zeros).
bool Uniform(const Tensor& t) {
  for (double v : t.data) {
    if (v != t.data.front()) return false;
  }
  return true;
}

// The initial states of an LSTM [directions, batch, hidden] (inputs 5 and 6) that are uniform
// constants of the old batch, such as a static ONNX export's torch.zeros(layers, b0, hidden):
// the same values at any batch, and axis 1 is the batch by the op's definition, so they follow
// the new batch. Anything else that bakes in the batch stays an error from InferShapes.
void ResizeUniformLstmStates(Graph& g, int64_t old_batch, int64_t batch) {
  for (const Node& n : g.nodes()) {
    if (n.kind != OpKind::kLstm) continue;
    for (size_t slot : {5, 6}) {
      if (slot >= n.inputs.size() || n.inputs[slot] == kNoTensor) continue;
      Tensor& t = g.mutable_tensor(n.inputs[slot]);
      if (t.role == TensorRole::kConstant && t.shape.size() == 3 && t.shape[1] == old_batch &&
          Uniform(t)) {
        t.shape[1] = batch;
        if (t.data.size() > 1) t.data.resize(1);
      }
    }
  }
}

}  // namespace

absl::Status SetBatch(Graph& graph, int64_t batch) {
  if (batch < 1) {
    return absl::InvalidArgumentError(absl::StrCat("batch must be at least 1, got ", batch));
  }
  Graph updated = graph;
  const int64_t old_batch = GraphBatch(graph);
  for (TensorId id : updated.TensorsWithRole(TensorRole::kInput)) {
    Tensor& t = updated.mutable_tensor(id);
    if (t.batch_axis >= 0 && t.batch_axis < static_cast<int64_t>(t.shape.size())) {
      t.shape[t.batch_axis] = batch;
    }
  }
  if (old_batch > 0 && old_batch != batch) ResizeUniformLstmStates(updated, old_batch, batch);
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
