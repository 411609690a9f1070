#include "tessera/graph/onnx/roles.h"

#include <deque>

namespace tessera::graph::onnx_import {
namespace {

enum class Use : uint8_t { kNone, kData, kBuffer, kWeight };

bool IsRelayout(OpKind kind) {
  switch (kind) {
    case OpKind::kIdentity:
    case OpKind::kTranspose:
    case OpKind::kReshape:
    case OpKind::kFlatten:
    case OpKind::kSqueeze:
    case OpKind::kUnsqueeze:
    case OpKind::kSlice:
    case OpKind::kConcat:
    case OpKind::kSplit:
    case OpKind::kCast:
    case OpKind::kExpand:
    case OpKind::kDropout: return true;
    default: return false;
  }
}

// `v` has no batch dimension next to `other`.
bool NoBatchDim(const Shape& v, const Shape& other) {
  if (v.size() < other.size()) return true;
  return v.size() == other.size() && !v.empty() && v[0] == 1 && other[0] != 1;
}

// What reading tensor `t` at input `slot` of `node` says about t's origin.
Use ClassifyUse(const Graph& g, const Node& node, int slot) {
  const Shape& v = g.tensor(node.inputs[slot]).shape;
  auto other = [&](int s) -> const Shape& { return g.tensor(node.inputs[s]).shape; };
  switch (node.kind) {
    case OpKind::kConv:
    case OpKind::kGemm:
    case OpKind::kEmbedding: return slot >= 1 ? Use::kWeight : Use::kData;
    case OpKind::kLstm: return slot >= 1 && slot <= 3 ? Use::kWeight : Use::kData;
    case OpKind::kBatchNorm: return slot == 0 ? Use::kData : slot <= 2 ? Use::kWeight : Use::kBuffer;
    case OpKind::kLayerNorm: return slot >= 1 ? Use::kWeight : Use::kData;
    case OpKind::kGather: return slot == 0 ? Use::kWeight : Use::kData;
    case OpKind::kMatMul:
      if (slot == 1 && v.size() <= 2) return Use::kWeight;
      return NoBatchDim(v, other(1 - slot)) ? Use::kWeight : Use::kData;
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kPow:
      return NoBatchDim(v, other(1 - slot)) ? Use::kWeight : Use::kData;
    case OpKind::kWhere:
      if (slot == 0) return Use::kData;
      return NoBatchDim(v, other(3 - slot)) ? Use::kWeight : Use::kData;
    default: return Use::kData;
  }
}

// The strongest use of `start` through weight re-layouts (weight > buffer > data).
Use StrongestUse(const Graph& g, const std::vector<std::vector<NodeId>>& consumers,
                 TensorId start) {
  Use best = Use::kNone;
  std::deque<TensorId> frontier = {start};
  absl::flat_hash_set<TensorId> seen = {start};  // small: the candidate's re-layouts
  while (!frontier.empty()) {
    const TensorId t = frontier.front();
    frontier.pop_front();
    for (NodeId n : consumers[t]) {
      const Node& node = g.node(n);
      if (IsRelayout(node.kind)) {
        for (TensorId out : node.outputs) {
          if (seen.insert(out).second) frontier.push_back(out);
        }
        continue;
      }
      for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
        if (node.inputs[slot] != t) continue;
        const Use u = ClassifyUse(g, node, static_cast<int>(slot));
        if (static_cast<int>(u) > static_cast<int>(best)) best = u;
      }
    }
  }
  return best;
}

}  // namespace

absl::flat_hash_map<std::string, TensorRole> ClassifyCandidates(
    const Graph& graph, const std::vector<Candidate>& candidates, const RoleRules& rules) {
  absl::flat_hash_map<std::string, TensorRole> roles;
  const auto consumers = graph.Consumers();
  const bool manual = !rules.data_inputs.empty();
  for (const Candidate& c : candidates) {
    const Tensor& t = graph.tensor(c.tensor);
    TensorRole& role = roles[t.name];
    const TensorRole not_param = c.is_initializer ? TensorRole::kConstant : TensorRole::kInput;
    const bool listed = rules.data_inputs.contains(t.name);
    const bool forced = manual ? listed : rules.forced_data.contains(t.name);
    if (!IsFloating(t.dtype) || (forced && !c.is_initializer)) {
      role = not_param;
      continue;
    }
    const Use use = StrongestUse(graph, consumers, c.tensor);
    if (use == Use::kWeight || (manual && !c.is_initializer && use != Use::kBuffer)) {
      role = TensorRole::kParameter;
    } else if (use == Use::kBuffer) {
      role = TensorRole::kConstant;
    } else {
      role = not_param;
    }
  }
  return roles;
}

void ApplyRoles(Graph& graph, const absl::flat_hash_map<std::string, TensorRole>& roles) {
  for (const auto& [name, role] : roles) {
    if (auto id = graph.FindTensor(name)) graph.mutable_tensor(*id).role = role;
  }
}

void GatherToEmbedding(Graph& graph) {
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    Node& node = graph.mutable_node(n);
    if (node.kind != OpKind::kGather || node.inputs.size() != 2) continue;
    TensorId table = node.inputs[0];
    // Look through Identity aliases of the table.
    for (int hops = 0; hops < 64; ++hops) {
      const NodeId p = graph.tensor(table).producer;
      if (p == kNoNode || graph.node(p).kind != OpKind::kIdentity) break;
      table = graph.node(p).inputs[0];
    }
    const Tensor& w = graph.tensor(table);
    const Tensor& ids = graph.tensor(node.inputs[1]);
    const int64_t axis = std::get<AxisAttrs>(node.attrs).axis;
    if (w.role != TensorRole::kParameter || w.shape.size() != 2 || (axis != 0 && axis != -2) ||
        (ids.dtype != DType::kI32 && ids.dtype != DType::kI64)) {
      continue;
    }
    node.kind = OpKind::kEmbedding;
    node.inputs = {node.inputs[1], node.inputs[0]};
    node.attrs = std::monostate{};
  }
}

}  // namespace tessera::graph::onnx_import
