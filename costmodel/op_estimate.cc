// Per-op estimates: bytes, parameters, and the attribution of kept tensors.
//
// Attribution rule: the backward of each node names the tensors it reads (its keeps).
// Their union is what the graph keeps; each kept tensor counts once. A kept tensor that
// depends on data is charged to the activation_bytes of the node producing it, or, for a
// data input, to the graph's data-input share. Parameters, constants and tensors derived
// only from them are weights, not activations, and are not charged. Masks, indices and
// statistics a node saves for itself are charged to that node.
#include "tessera/costmodel/op_estimate.h"

#include <algorithm>

#include "tessera/base/check.h"
#include "tessera/costmodel/op_estimate_impl.h"
#include "tessera/graph/parameters.h"

namespace tessera::costmodel {
namespace {

using estimate::GraphFacts;
using estimate::NodeCost;
using graph::TensorId;

// Everything but activation_bytes, which needs the keeps of the node's consumers.
OpEstimate BaseEstimate(const graph::Graph& g, graph::NodeId id, const GraphFacts& facts,
                        const NodeCost& cost) {
  const graph::Node& node = g.node(id);
  OpEstimate e;
  e.flops_forward = cost.flops_forward;
  e.flops_backward = cost.flops_backward;
  e.activation_bytes = cost.private_keep_bytes;
  std::vector<TensorId> inputs, params;
  for (TensorId t : node.inputs) {
    if (t < 0 || t >= g.num_tensors()) continue;
    inputs.push_back(t);
    params.insert(params.end(), facts.sources[t].begin(), facts.sources[t].end());
  }
  std::sort(inputs.begin(), inputs.end());
  inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
  for (TensorId t : inputs) e.bytes_read = estimate::SatAdd(e.bytes_read, estimate::TensorBytes(g.tensor(t)));
  for (TensorId t : node.outputs) {
    if (t < 0 || t >= g.num_tensors()) continue;
    e.bytes_written = estimate::SatAdd(e.bytes_written, estimate::TensorBytes(g.tensor(t)));
  }
  // A derivation's parameters are charged to the nodes that compute with its outputs.
  if (!facts.derivation[id]) e.params = graph::CountParameterElements(g, params);
  return e;
}

// Marks kept[t] for every tensor `cost` keeps.
void MarkKeeps(const graph::Graph& g, const NodeCost& cost, std::vector<bool>& kept) {
  for (TensorId t : cost.keeps) {
    if (t >= 0 && t < g.num_tensors()) kept[t] = true;
  }
}

// Bytes of the tensors in `kept` that depend on data and are produced by `id`.
int64_t KeptOutputBytes(const graph::Graph& g, graph::NodeId id, const GraphFacts& facts,
                        const std::vector<bool>& kept) {
  int64_t bytes = 0;
  const auto& outputs = g.node(id).outputs;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorId t = outputs[i];
    if (t < 0 || t >= g.num_tensors() || !kept[t] || !facts.depends_on_data[t]) continue;
    if (std::find(outputs.begin(), outputs.begin() + i, t) != outputs.begin() + i) continue;
    bytes = estimate::SatAdd(bytes, estimate::TensorBytes(g.tensor(t)));
  }
  return bytes;
}

}  // namespace

OpEstimate EstimateOp(const graph::Graph& graph, graph::NodeId node) {
  TS_CHECK(node >= 0 && node < graph.num_nodes()) << "node id " << node;
  const GraphFacts facts = estimate::AnalyzeGraph(graph);
  const NodeCost cost = estimate::CostNode(graph, node, facts);
  OpEstimate e = BaseEstimate(graph, node, facts, cost);
  // Only this node and the consumers of its outputs can keep its outputs.
  std::vector<bool> kept(graph.num_tensors(), false);
  MarkKeeps(graph, cost, kept);
  const auto consumers = graph.Consumers();
  for (TensorId t : graph.node(node).outputs) {
    if (t < 0 || t >= graph.num_tensors()) continue;
    for (graph::NodeId c : consumers[t]) {
      if (c != node) MarkKeeps(graph, estimate::CostNode(graph, c, facts), kept);
    }
  }
  e.activation_bytes = estimate::SatAdd(e.activation_bytes, KeptOutputBytes(graph, node, facts, kept));
  return e;
}

GraphEstimate EstimateGraph(const graph::Graph& graph) {
  const GraphFacts facts = estimate::AnalyzeGraph(graph);
  GraphEstimate total;
  total.ops.resize(graph.num_nodes());
  std::vector<bool> kept(graph.num_tensors(), false);
  for (graph::NodeId id = 0; id < graph.num_nodes(); ++id) {
    const NodeCost cost = estimate::CostNode(graph, id, facts);
    total.ops[id] = BaseEstimate(graph, id, facts, cost);
    MarkKeeps(graph, cost, kept);
  }
  for (graph::NodeId id = 0; id < graph.num_nodes(); ++id) {
    OpEstimate& e = total.ops[id];
    e.activation_bytes = estimate::SatAdd(e.activation_bytes, KeptOutputBytes(graph, id, facts, kept));
    total.flops_forward += e.flops_forward;
    total.flops_backward += e.flops_backward;
    total.activation_bytes = estimate::SatAdd(total.activation_bytes, e.activation_bytes);
    total.bytes_read = estimate::SatAdd(total.bytes_read, e.bytes_read);
    total.bytes_written = estimate::SatAdd(total.bytes_written, e.bytes_written);
  }
  // Data inputs kept for backward (images for the first layer's dW, labels, token ids).
  for (TensorId t = 0; t < graph.num_tensors(); ++t) {
    if (kept[t] && graph.tensor(t).role == graph::TensorRole::kInput) {
      total.activation_bytes = estimate::SatAdd(total.activation_bytes, estimate::TensorBytes(graph.tensor(t)));
    }
  }
  total.params = graph::CountParameters(graph);
  return total;
}

}  // namespace tessera::costmodel
