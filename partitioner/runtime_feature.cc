// RuntimeFeatureObstacle (runtime_feature.h).
#include "tessera/partitioner/runtime_feature.h"

#include "absl/strings/str_cat.h"

namespace tessera::partitioner {

std::string RuntimeFeatureObstacle(const graph::Graph& graph, const graph::Node& node,
                                   int devices) {
  if (node.outputs.empty() || node.inputs.empty()) return "it has no input or output";
  const graph::Shape& y = graph.tensor(node.outputs[0]).shape;
  const bool loss = node.kind == graph::OpKind::kSoftmaxCrossEntropy;
  if (loss) {
    const graph::Shape& logits = graph.tensor(node.inputs[0]).shape;
    const auto* a = std::get_if<graph::LossAttrs>(&node.attrs);
    if (logits.size() != 2) return "the feature-split loss needs 2-D logits [rows, classes]";
    if (a == nullptr || a->reduction == graph::Reduction::kNone) {
      return "the feature-split loss needs mean or sum reduction";
    }
    if (logits[1] % devices != 0) {
      return absl::StrCat("its ", logits[1], " classes do not divide over ", devices, " ranks");
    }
    return "";
  }
  if (graph::GetOpSchema(node.kind).op_class != graph::OpClass::kElementwise) {
    return "only element-wise ops and SoftmaxCrossEntropy run on the feature layout";
  }
  if (y.empty() || y.back() % devices != 0) {
    return absl::StrCat("its last axis does not divide over ", devices, " ranks");
  }
  for (graph::TensorId t : node.inputs) {
    if (t == graph::kNoTensor) continue;
    const graph::Tensor& x = graph.tensor(t);
    if (x.shape != y && graph::NumElements(x.shape) != 1) {
      return absl::StrCat("its input '", x.name, "' is broadcast; on the feature layout every "
                          "input must have the output's shape or hold one value");
    }
  }
  return "";
}

}  // namespace tessera::partitioner
