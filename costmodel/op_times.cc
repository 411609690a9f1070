// The key of a model's stored op times (op_times.h).
#include "tessera/costmodel/op_times.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/base/hash.h"
#include "tessera/graph/dtype.h"
#include "tessera/graph/op_kind.h"

namespace tessera::costmodel {

std::string OpTimesKey(const graph::Graph& graph, int devices, int threads,
                       OptimizerKind optimizer, std::string_view blas_kernels) {
  // Each node's kind, name, and its tensors' shapes and dtypes, in the graph's order.
  std::string text;
  const auto add_tensor = [&](graph::TensorId t) {
    if (t == graph::kNoTensor) {
      text += "-;";
      return;
    }
    const graph::Tensor& tensor = graph.tensor(t);
    absl::StrAppend(&text, graph::DTypeName(tensor.dtype), "[");
    for (int64_t d : tensor.shape) absl::StrAppend(&text, d, ",");
    text += "];";
  };
  for (const graph::Node& n : graph.nodes()) {
    absl::StrAppend(&text, graph::OpName(n.kind), " ", n.name, "(");
    for (graph::TensorId t : n.inputs) add_tensor(t);
    text += ")->(";
    for (graph::TensorId t : n.outputs) add_tensor(t);
    text += ")\n";
  }
  return absl::StrFormat("%s/%016x/%dx%d/%s/%s", graph.name(), base::Fnv1a64(text), devices,
                         threads, OptimizerName(optimizer), blas_kernels);
}

}  // namespace tessera::costmodel
