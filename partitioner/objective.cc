// The planners' additive objective.
#include "tessera/partitioner/objective.h"

namespace tessera::partitioner {

double OptionCost(const LayerOption& o) {
  return o.forward_compute_s + o.backward_compute_s + o.forward_comm_s + o.backward_comm_s +
         o.sync_s;
}

const TransitionCost& EdgeTransition(const Problem& problem, int edge, Layout from, Layout to,
                                     bool partial) {
  static const TransitionCost kFree;
  const Edge& e = problem.edges[edge];
  if (e.producer < 0) return kFree;  // data inputs are loaded in whatever layout is needed
  return e.costs.at(from, to, partial);
}

Layout ProducerLayout(const Problem& problem, int edge, const Choice& choice) {
  const int producer = problem.edges[edge].producer;
  if (producer < 0) return Layout::kBatch;
  return problem.layers[producer].options[choice[producer]].output;
}

double InputsCost(const Problem& problem, int layer, int option, const Choice& choice) {
  const Layer& l = problem.layers[layer];
  const LayerOption& o = l.options[option];
  double total = 0;
  for (size_t i = 0; i < l.inputs.size(); ++i) {
    const int e = l.inputs[i];
    const TransitionCost& t =
        EdgeTransition(problem, e, ProducerLayout(problem, e, choice), o.inputs[i], o.partial_dx);
    total += t.forward_s + t.backward_s;
  }
  return total;
}

double TotalCost(const Problem& problem, const Choice& choice) {
  double total = 0;
  for (int i = 0; i < static_cast<int>(problem.layers.size()); ++i) {
    total += OptionCost(problem.layers[i].options[choice[i]]) + InputsCost(problem, i, choice[i], choice);
  }
  return total;
}

std::vector<std::vector<int>> OutEdges(const Problem& problem) {
  std::vector<std::vector<int>> out(problem.layers.size());
  for (int e = 0; e < static_cast<int>(problem.edges.size()); ++e) {
    if (problem.edges[e].producer >= 0) out[problem.edges[e].producer].push_back(e);
  }
  return out;
}

double NeighbourhoodCost(const Problem& problem, const std::vector<std::vector<int>>& out_edges,
                         int i, int k, Choice& choice) {
  const int saved = choice[i];
  choice[i] = k;
  double cost = OptionCost(problem.layers[i].options[k]) + InputsCost(problem, i, k, choice);
  for (int e : out_edges[i]) {
    for (int j : problem.edges[e].consumers) cost += InputsCost(problem, j, choice[j], choice);
  }
  choice[i] = saved;
  return cost;
}

}  // namespace tessera::partitioner
