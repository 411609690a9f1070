#include "tessera/graph/parameters.h"

#include <algorithm>
#include <limits>

namespace tessera::graph {
namespace {

bool IsStaticRole(TensorRole role) {
  return role == TensorRole::kParameter || role == TensorRole::kConstant;
}

// Nodes in topological order; when the graph has a cycle (Validate reports it), node
// order, which is topological for every graph built front to back.
std::vector<NodeId> NodeOrder(const Graph& graph) {
  auto order = graph.TopologicalOrder();
  if (order.ok()) return *std::move(order);
  std::vector<NodeId> ids(graph.num_nodes());
  for (NodeId n = 0; n < graph.num_nodes(); ++n) ids[n] = n;
  return ids;
}

// True when `node` qualifies as a derivation given the sources known so far.
bool ReadsOnlyWeights(const Graph& graph, const Node& node,
                      const std::vector<std::vector<TensorId>>& sources) {
  bool reads_parameter = false;
  for (TensorId t : node.inputs) {
    if (t == kNoTensor) continue;
    if (t < 0 || t >= graph.num_tensors()) return false;
    const bool derived = !sources[t].empty();
    if (!derived && !IsStaticRole(graph.tensor(t).role)) return false;
    reads_parameter = reads_parameter || derived;
  }
  return reads_parameter;
}

}  // namespace

std::vector<std::vector<TensorId>> ParameterSources(const Graph& graph) {
  std::vector<std::vector<TensorId>> sources(graph.num_tensors());
  for (TensorId t = 0; t < graph.num_tensors(); ++t) {
    if (graph.tensor(t).role == TensorRole::kParameter) sources[t] = {t};
  }
  for (NodeId id : NodeOrder(graph)) {
    const Node& node = graph.node(id);
    if (!ReadsOnlyWeights(graph, node, sources)) continue;
    std::vector<TensorId> merged;
    for (TensorId t : node.inputs) {
      if (t != kNoTensor) merged.insert(merged.end(), sources[t].begin(), sources[t].end());
    }
    std::sort(merged.begin(), merged.end());
    merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
    for (TensorId out : node.outputs) {
      if (out >= 0 && out < graph.num_tensors() &&
          graph.tensor(out).role == TensorRole::kActivation) {
        sources[out] = merged;
      }
    }
  }
  return sources;
}

bool IsParameterDerivation(const Graph& graph, NodeId node,
                           const std::vector<std::vector<TensorId>>& sources) {
  if (node < 0 || node >= graph.num_nodes()) return false;
  if (static_cast<int>(sources.size()) != graph.num_tensors()) return false;
  return ReadsOnlyWeights(graph, graph.node(node), sources);
}

int64_t CountParameterElements(const Graph& graph, const std::vector<TensorId>& params) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::vector<TensorId> distinct = params;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  int64_t total = 0;
  for (TensorId t : distinct) {
    if (t < 0 || t >= graph.num_tensors()) continue;
    const Tensor& tensor = graph.tensor(t);
    if (tensor.role != TensorRole::kParameter) continue;
    const int64_t n = std::max<int64_t>(NumElements(tensor.shape), 0);
    total = n > kMax - total ? kMax : total + n;
  }
  return total;
}

int64_t CountParameters(const Graph& graph) {
  return CountParameterElements(graph, graph.TensorsWithRole(TensorRole::kParameter));
}

}  // namespace tessera::graph
