// RuntimeDenseObstacle (runtime_dense.h).
#include "tessera/partitioner/runtime_dense.h"

#include "absl/strings/str_cat.h"

namespace tessera::partitioner {
namespace {

int Readers(const graph::Graph& g, graph::TensorId t) {
  int n = 0;
  for (const graph::Node& node : g.nodes()) {
    for (graph::TensorId in : node.inputs) n += in == t;
  }
  return n;
}

}  // namespace

std::string RuntimeDenseObstacle(const graph::Graph& graph, const graph::Node& node,
                                 Strategy strategy) {
  const bool gemm = node.kind == graph::OpKind::kGemm;
  const bool product = gemm || node.kind == graph::OpKind::kMatMul;
  if (strategy == Strategy::kLateMultiply && !product) {
    return "only Gemm and MatMul layers run late-multiply";
  }
  if (!product && node.kind != graph::OpKind::kEmbedding) {
    return "only Gemm, MatMul and Embedding layers run model-parallel";
  }
  if (gemm && std::get<graph::GemmAttrs>(node.attrs).trans_a) {
    return "a Gemm with transA runs data-parallel only";
  }
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    const graph::TensorId t = node.inputs[i];
    if (t == graph::kNoTensor) continue;
    const graph::Tensor& x = graph.tensor(t);
    if (x.role != graph::TensorRole::kParameter || Readers(graph, t) != 1 ||
        (i == 1 && x.shape.size() != 2) ||
        (i == 2 && graph::NumElements(x.shape) != x.shape.back())) {
      return absl::StrCat("'", x.name, "' must be a parameter read by this layer only (a 2-D "
                          "weight, a bias of N values)");
    }
  }
  return "";
}

}  // namespace tessera::partitioner
