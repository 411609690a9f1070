// BuildProblem: layers in topological order (parameter derivations folded into
// their consumers), the tensors between them, and every layer's options.
#include "tessera/partitioner/problem.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/parameters.h"
#include "tessera/partitioner/layer_options.h"

namespace tessera::partitioner {
namespace {

using graph::Graph;
using graph::NodeId;
using graph::TensorId;
using graph::TensorRole;

int64_t TensorBytes(const graph::Tensor& t) {
  return graph::NumElements(t.shape) * graph::DTypeSize(t.dtype);
}

// needs_grad[t]: the tensor is a parameter or computed (through any path) from one.
std::vector<bool> NeedsGrad(const Graph& graph, const std::vector<NodeId>& order) {
  std::vector<bool> needs(graph.num_tensors(), false);
  for (TensorId t = 0; t < graph.num_tensors(); ++t) {
    needs[t] = graph.tensor(t).role == TensorRole::kParameter;
  }
  for (NodeId n : order) {
    const graph::Node& node = graph.node(n);
    bool any = false;
    for (TensorId in : node.inputs) any = any || (in != graph::kNoTensor && needs[in]);
    for (TensorId out : node.outputs) needs[out] = any;
  }
  return needs;
}

LayerKind KindOf(const Graph& graph, const graph::Node& node, bool has_params,
                 const std::vector<std::vector<TensorId>>& sources) {
  if (!has_params) return LayerKind::kParamless;
  switch (node.kind) {
    case graph::OpKind::kConv:
    case graph::OpKind::kEmbedding:
    case graph::OpKind::kGemm:
      return sources[node.inputs[0]].empty() ? LayerKind::kDense : LayerKind::kParamOther;
    case graph::OpKind::kMatMul: {
      // Dense when X is data and the weight operand (B) is a 2-D parameter.
      const TensorId w = node.inputs[1];
      const bool dense = sources[node.inputs[0]].empty() && !sources[w].empty() &&
                         graph.tensor(w).shape.size() == 2;
      return dense ? LayerKind::kDense : LayerKind::kParamOther;
    }
    case graph::OpKind::kLstm: return LayerKind::kRecurrent;
    default: return LayerKind::kParamOther;
  }
}

}  // namespace

int FindOption(const Layer& layer, Strategy strategy, std::optional<Layout> output) {
  for (int i = 0; i < static_cast<int>(layer.options.size()); ++i) {
    const LayerOption& o = layer.options[i];
    if (o.strategy == strategy && (!output || o.output == *output)) return i;
  }
  return -1;
}

Choice AllDataParallel(const Problem& problem) {
  Choice choice(problem.layers.size(), 0);
  for (size_t i = 0; i < problem.layers.size(); ++i) {
    const int dp = FindOption(problem.layers[i], Strategy::kDataParallel);
    choice[i] = dp >= 0 ? dp : 0;
  }
  return choice;
}

namespace {

// The training step's lifetimes and where each layer runs in them.
absl::Status AddLifetimes(const graph::Graph& graph, Problem& problem) {
  TS_ASSIGN_OR_RETURN(
      problem.lifetimes,
      memory::AnalyzeTrainingLifetimes(
          graph, {.optimizer_states_per_param =
                      costmodel::OptimizerStateSlots(problem.options.optimizer)}));
  problem.num_nodes = graph.num_nodes();
  std::vector<int64_t> forward(graph.num_nodes(), -1), backward(graph.num_nodes(), -1);
  const std::vector<memory::Step>& steps = problem.lifetimes.steps;
  for (int64_t s = 0; s < static_cast<int64_t>(steps.size()); ++s) {
    if (steps[s].node < 0 || steps[s].node >= graph.num_nodes()) continue;
    if (steps[s].phase == memory::Phase::kForward) forward[steps[s].node] = s;
    if (steps[s].phase == memory::Phase::kBackward) backward[steps[s].node] = s;
  }
  for (const Layer& layer : problem.layers) {
    problem.forward_step.push_back(forward[layer.node]);
    problem.backward_step.push_back(backward[layer.node]);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Problem> BuildProblem(const Graph& graph, const costmodel::CostModel* cost,
                                     const ProblemOptions& options) {
  TS_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.TopologicalOrder());
  const costmodel::GraphEstimate estimate = costmodel::EstimateGraph(graph);
  const std::vector<std::vector<TensorId>> sources = graph::ParameterSources(graph);
  const std::vector<bool> needs_grad = NeedsGrad(graph, order);
  Problem problem;
  problem.options = options;
  problem.comm = MakeCommContext(cost, options.devices);
  absl::flat_hash_map<NodeId, int> layer_of;
  absl::flat_hash_map<TensorId, int> edge_of;
  absl::flat_hash_set<TensorId> seen_params;
  int64_t op_activation_bytes = 0;
  for (NodeId n : order) {
    if (graph::IsParameterDerivation(graph, n, sources)) continue;
    const graph::Node& node = graph.node(n);
    const costmodel::OpEstimate& e = estimate.ops[n];
    const int index = static_cast<int>(problem.layers.size());
    Layer layer{.node = n, .name = node.name, .op = std::string(graph::OpName(node.kind))};
    std::vector<TensorId> params;
    for (TensorId in : node.inputs) {
      if (in == graph::kNoTensor) continue;
      if (!sources[in].empty()) {
        params.insert(params.end(), sources[in].begin(), sources[in].end());
        continue;
      }
      const TensorRole role = graph.tensor(in).role;
      if (role != TensorRole::kInput && role != TensorRole::kActivation) continue;
      auto [it, inserted] = edge_of.try_emplace(in, static_cast<int>(problem.edges.size()));
      if (inserted) {
        const graph::Tensor& t = graph.tensor(in);
        const bool produced = t.role == TensorRole::kActivation && layer_of.contains(t.producer);
        problem.edges.push_back({.tensor = in,
                                 .producer = produced ? layer_of.at(t.producer) : -1,
                                 .bytes = static_cast<double>(TensorBytes(t)),
                                 .needs_grad = produced && needs_grad[in]});
      }
      Edge& edge = problem.edges[it->second];
      if (edge.consumers.empty() || edge.consumers.back() != index) edge.consumers.push_back(index);
      layer.inputs.push_back(it->second);
    }
    std::sort(params.begin(), params.end());
    params.erase(std::unique(params.begin(), params.end()), params.end());
    int64_t param_bytes = 0;
    for (TensorId p : params) {
      layer.param_names.push_back(graph.tensor(p).name);
      param_bytes += TensorBytes(graph.tensor(p));
      if (!seen_params.insert(p).second) continue;
      layer.owned_param_bytes += TensorBytes(graph.tensor(p));
      layer.owned_param_sizes.push_back(TensorBytes(graph.tensor(p)));
    }
    layer.params = graph::CountParameterElements(graph, params);
    layer.kind = KindOf(graph, node, !params.empty(), sources);
    layer.forward_flops = e.flops_forward;
    layer.backward_flops = e.flops_backward;
    layer.activation_bytes = e.activation_bytes;
    op_activation_bytes += e.activation_bytes;
    if (param_bytes > 0) {
      layer.flops_per_param_byte =
          (e.flops_forward + e.flops_backward) / options.devices / static_cast<double>(param_bytes);
    }
    layer.outputs = node.outputs;
    layer_of[n] = index;
    problem.layers.push_back(std::move(layer));
  }
  problem.data_input_activation_bytes =
      std::max<int64_t>(0, estimate.activation_bytes - op_activation_bytes);
  for (Edge& edge : problem.edges) {
    edge.costs = ComputeEdgeCosts(edge.bytes, edge.needs_grad, problem.comm);
  }
  for (Layer& layer : problem.layers) {
    layer.options = BuildLayerOptions(graph, estimate.ops[layer.node], layer, problem);
  }
  TS_RETURN_IF_ERROR(AddLifetimes(graph, problem));
  return problem;
}

}  // namespace tessera::partitioner
