// Each rank's share of a mean loss over non-ignored labels (loss_share.h).
#include "tessera/exec/loss_share.h"

#include <algorithm>
#include <variant>

#include "absl/strings/str_cat.h"

namespace tessera::exec {
namespace {

bool IsLayout(graph::OpKind kind) {
  switch (kind) {
    case graph::OpKind::kReshape:
    case graph::OpKind::kTranspose:
    case graph::OpKind::kSqueeze:
    case graph::OpKind::kUnsqueeze:
    case graph::OpKind::kFlatten:
    case graph::OpKind::kIdentity:
      return true;
    default:
      return false;
  }
}

int64_t Counted(const Batch& batch, const std::string& name, int64_t ignore_index) {
  auto it = batch.values.find(name);
  if (it == batch.values.end()) return 0;
  return std::visit([&](const auto& v) {
    return static_cast<int64_t>(std::count_if(v.begin(), v.end(), [&](auto x) {
      return static_cast<int64_t>(x) != ignore_index;
    }));
  }, it->second);
}

}  // namespace

int64_t LossShare::Count(const Batch& batch) const {
  return label_input.empty() ? 0 : Counted(batch, label_input, ignore_index);
}

float LossShare::Scale(const Batch& whole, const Batch& mine, int ranks) const {
  if (label_input.empty()) return 1.f / static_cast<float>(ranks);
  const int64_t n_whole = Counted(whole, label_input, ignore_index);
  if (n_whole == 0) return 0.f;
  return static_cast<float>(static_cast<double>(Counted(mine, label_input, ignore_index)) /
                            static_cast<double>(n_whole));
}

absl::StatusOr<LossShare> FindLossShare(const graph::Graph& graph) {
  LossShare share;
  if (graph.outputs().empty()) return share;
  const graph::Tensor& loss = graph.tensor(graph.outputs()[0]);
  if (loss.producer == graph::kNoNode) return share;
  const graph::Node& node = graph.node(loss.producer);
  const auto* attrs = std::get_if<graph::LossAttrs>(&node.attrs);
  if (node.kind != graph::OpKind::kSoftmaxCrossEntropy || attrs == nullptr ||
      attrs->ignore_index < 0 || attrs->reduction != graph::Reduction::kMean ||
      node.inputs.size() < 2) {
    return share;
  }
  graph::TensorId labels = node.inputs[1];
  while (graph.tensor(labels).role == graph::TensorRole::kActivation) {
    const graph::Node& producer = graph.node(graph.tensor(labels).producer);
    if (!IsLayout(producer.kind) || producer.inputs.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "loss '", node.name, "' ignores label ", attrs->ignore_index, " but its labels come from '",
          producer.name, "' (", graph::OpName(producer.kind),
          "), not straight from a data input: the workers could not weight their means; feed the "
          "labels as a data input (reshaped or transposed at most) or train on 1 worker"));
    }
    labels = producer.inputs[0];
  }
  if (graph.tensor(labels).role != graph::TensorRole::kInput) return share;
  share.label_input = graph.tensor(labels).name;
  share.ignore_index = attrs->ignore_index;
  return share;
}

}  // namespace tessera::exec
