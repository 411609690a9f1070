#include "tessera/graph/graph.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tessera/base/check.h"

namespace tessera::graph {

absl::string_view TensorRoleName(TensorRole role) {
  switch (role) {
    case TensorRole::kInput: return "input";
    case TensorRole::kParameter: return "parameter";
    case TensorRole::kActivation: return "activation";
    case TensorRole::kConstant: return "constant";
  }
  return "?";
}

absl::StatusOr<TensorId> Graph::AddTensor(Tensor tensor) {
  if (tensor.name.empty()) {
    return absl::InvalidArgumentError("a tensor needs a non-empty name");
  }
  if (tensor_index_.contains(tensor.name)) {
    return absl::AlreadyExistsError(
        absl::StrCat("tensor name '", tensor.name, "' is used twice; names must be unique"));
  }
  const TensorId id = static_cast<TensorId>(tensors_.size());
  tensor.producer = kNoNode;
  tensor_index_.emplace(tensor.name, id);
  tensors_.push_back(std::move(tensor));
  return id;
}

absl::StatusOr<NodeId> Graph::AddNode(Node node) {
  const OpSchema& schema = GetOpSchema(node.kind);
  const auto where = [&] { return absl::StrCat("node '", node.name, "' (", schema.name, ")"); };
  const int n_in = static_cast<int>(node.inputs.size());
  if (n_in < schema.min_inputs || n_in > schema.max_inputs) {
    return absl::InvalidArgumentError(absl::StrCat(where(), " has ", n_in, " inputs; expected ",
                                                   schema.min_inputs, " to ", schema.max_inputs));
  }
  if (schema.num_outputs >= 0 && static_cast<int>(node.outputs.size()) != schema.num_outputs) {
    return absl::InvalidArgumentError(absl::StrCat(where(), " has ", node.outputs.size(),
                                                   " outputs; expected ", schema.num_outputs));
  }
  if (node.outputs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where(), " has no outputs"));
  }
  if (!AttrsMatchKind(node.kind, node.attrs)) {
    return absl::InvalidArgumentError(absl::StrCat(where(), " carries attributes of another op"));
  }
  for (int i = 0; i < n_in; ++i) {
    const TensorId t = node.inputs[i];
    const bool required = i < schema.min_inputs;
    if (t == kNoTensor && !required) continue;
    if (t < 0 || t >= num_tensors()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), " input ", i, " refers to tensor id ", t, ", which does not exist"));
    }
  }
  const NodeId id = static_cast<NodeId>(nodes_.size());
  for (TensorId t : node.outputs) {
    if (t < 0 || t >= num_tensors()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), " output refers to tensor id ", t, ", which does not exist"));
    }
    const Tensor& out = tensors_[t];
    if (out.role != TensorRole::kActivation) {
      return absl::InvalidArgumentError(absl::StrCat(where(), " writes tensor '", out.name,
                                                     "', which is a ", TensorRoleName(out.role),
                                                     "; only activations are produced by nodes"));
    }
    if (out.producer != kNoNode) {
      return absl::InvalidArgumentError(absl::StrCat(where(), " writes tensor '", out.name,
                                                     "', already written by node '",
                                                     nodes_[out.producer].name, "'"));
    }
    if (std::count(node.outputs.begin(), node.outputs.end(), t) > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), " lists output tensor '", out.name, "' more than once"));
    }
  }
  for (TensorId t : node.outputs) tensors_[t].producer = id;
  nodes_.push_back(std::move(node));
  return id;
}

void Graph::AddOutput(TensorId id) {
  TS_CHECK(id >= 0 && id < num_tensors()) << "output tensor id " << id;
  if (std::find(outputs_.begin(), outputs_.end(), id) == outputs_.end()) outputs_.push_back(id);
}

const Tensor& Graph::tensor(TensorId id) const {
  TS_CHECK(id >= 0 && id < num_tensors()) << "tensor id " << id;
  return tensors_[id];
}

Tensor& Graph::mutable_tensor(TensorId id) {
  TS_CHECK(id >= 0 && id < num_tensors()) << "tensor id " << id;
  return tensors_[id];
}

const Node& Graph::node(NodeId id) const {
  TS_CHECK(id >= 0 && id < num_nodes()) << "node id " << id;
  return nodes_[id];
}

Node& Graph::mutable_node(NodeId id) {
  TS_CHECK(id >= 0 && id < num_nodes()) << "node id " << id;
  return nodes_[id];
}

std::optional<TensorId> Graph::FindTensor(absl::string_view name) const {
  auto it = tensor_index_.find(name);
  if (it == tensor_index_.end()) return std::nullopt;
  return it->second;
}

std::vector<TensorId> Graph::TensorsWithRole(TensorRole role) const {
  std::vector<TensorId> ids;
  for (TensorId i = 0; i < num_tensors(); ++i) {
    if (tensors_[i].role == role) ids.push_back(i);
  }
  return ids;
}

std::vector<std::vector<NodeId>> Graph::Consumers() const {
  std::vector<std::vector<NodeId>> consumers(tensors_.size());
  for (NodeId n = 0; n < num_nodes(); ++n) {
    for (TensorId t : nodes_[n].inputs) {
      if (t == kNoTensor) continue;
      auto& list = consumers[t];
      if (list.empty() || list.back() != n) list.push_back(n);
    }
  }
  return consumers;
}

absl::StatusOr<std::vector<NodeId>> Graph::TopologicalOrder() const {
  // Kahn's algorithm over node -> node edges through activations.
  std::vector<int> pending(nodes_.size(), 0);
  const auto consumers = Consumers();
  for (NodeId n = 0; n < num_nodes(); ++n) {
    for (TensorId t : nodes_[n].inputs) {
      if (t != kNoTensor && tensors_[t].producer != kNoNode) ++pending[n];
    }
  }
  std::vector<NodeId> order;
  order.reserve(nodes_.size());
  for (NodeId n = 0; n < num_nodes(); ++n) {
    if (pending[n] == 0) order.push_back(n);
  }
  for (size_t head = 0; head < order.size(); ++head) {
    for (TensorId t : nodes_[order[head]].outputs) {
      for (NodeId c : consumers[t]) {
        // A consumer reading the same tensor k times was counted k times.
        for (TensorId in : nodes_[c].inputs) {
          if (in == t && --pending[c] == 0) order.push_back(c);
        }
      }
    }
  }
  if (order.size() != nodes_.size()) {
    for (NodeId n = 0; n < num_nodes(); ++n) {
      if (pending[n] > 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "graph '", name_, "' has a cycle through node '", nodes_[n].name, "'"));
      }
    }
  }
  return order;
}

absl::Status Graph::Validate() const {
  for (TensorId t = 0; t < num_tensors(); ++t) {
    const Tensor& tensor = tensors_[t];
    if (tensor.role != TensorRole::kActivation && tensor.producer != kNoNode) {
      return absl::InvalidArgumentError(
          absl::StrCat(TensorRoleName(tensor.role), " '", tensor.name, "' has a producer"));
    }
    for (int64_t d : tensor.shape) {
      if (d < 0) {
        return absl::InvalidArgumentError(absl::StrCat("tensor '", tensor.name,
                                                       "' has a negative dimension in shape ",
                                                       ShapeString(tensor.shape)));
      }
    }
  }
  for (TensorId t : outputs_) {
    if (t < 0 || t >= num_tensors()) {
      return absl::InvalidArgumentError(absl::StrCat("graph output id ", t, " does not exist"));
    }
    const Tensor& out = tensors_[t];
    if (out.role == TensorRole::kActivation && out.producer == kNoNode) {
      return absl::InvalidArgumentError(absl::StrCat(
          "graph output '", out.name, "' is an activation that no node produces; produce it "
          "with a node or give it the role input, parameter or constant"));
    }
  }
  // An activation read by a node must be produced by some node.
  for (const Node& node : nodes_) {
    for (TensorId t : node.inputs) {
      if (t == kNoTensor) continue;
      if (t < 0 || t >= num_tensors()) {
        return absl::InvalidArgumentError(
            absl::StrCat("node '", node.name, "' reads tensor id ", t, ", which does not exist"));
      }
      const Tensor& in = tensors_[t];
      if (in.role == TensorRole::kActivation && in.producer == kNoNode) {
        return absl::InvalidArgumentError(absl::StrCat(
            "activation '", in.name, "' is read by node '", node.name,
            "' but no node produces it; produce it with a node or give it the role input, "
            "parameter or constant"));
      }
    }
  }
  return TopologicalOrder().status();
}

}  // namespace tessera::graph
