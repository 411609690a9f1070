// Simulator-guided polish (docs/partitioner.md, "Polish").
#include "tessera/partitioner/polish.h"

#include <algorithm>

#include "tessera/partitioner/objective.h"
#include "tessera/partitioner/simulate.h"

namespace tessera::partitioner {
namespace {

double StepTime(const Problem& problem, const Choice& choice) {
  return Simulate(problem, choice, 0, false).step.step_time_s;
}

// Re-choose the parameterless layers next to layer i (one hop both ways) for their
// cheapest neighbourhood cost.
void ReshapeNeighbours(const Problem& problem, const std::vector<std::vector<int>>& out_edges,
                       int i, Choice& choice) {
  std::vector<int> around;
  for (int e : out_edges[i]) {
    for (int j : problem.edges[e].consumers) around.push_back(j);
  }
  for (int e : problem.layers[i].inputs) {
    if (problem.edges[e].producer >= 0) around.push_back(problem.edges[e].producer);
  }
  for (int j : around) {
    if (problem.layers[j].kind != LayerKind::kParamless) continue;
    int best = choice[j];
    double best_cost = NeighbourhoodCost(problem, out_edges, j, best, choice);
    for (int k = 0; k < static_cast<int>(problem.layers[j].options.size()); ++k) {
      const double c = NeighbourhoodCost(problem, out_edges, j, k, choice);
      if (c < best_cost) best_cost = c, best = k;
    }
    choice[j] = best;
  }
}

}  // namespace

Choice PolishWithSimulator(const Problem& problem, Choice choice) {
  std::vector<int> dense;
  for (int i = 0; i < static_cast<int>(problem.layers.size()); ++i) {
    if (problem.layers[i].kind == LayerKind::kDense && problem.layers[i].options.size() > 1) {
      dense.push_back(i);
    }
  }
  std::sort(dense.begin(), dense.end(), [&](int a, int b) {
    return problem.layers[a].owned_param_bytes > problem.layers[b].owned_param_bytes;
  });
  if (dense.size() > static_cast<size_t>(kPolishLayers)) dense.resize(kPolishLayers);
  const std::vector<std::vector<int>> out_edges = OutEdges(problem);
  double best = StepTime(problem, choice);
  for (int pass = 0; pass < kPolishPasses; ++pass) {
    bool changed = false;
    for (int i : dense) {
      for (int k = 0; k < static_cast<int>(problem.layers[i].options.size()); ++k) {
        if (k == choice[i]) continue;
        Choice trial = choice;
        trial[i] = k;
        ReshapeNeighbours(problem, out_edges, i, trial);
        const double t = StepTime(problem, trial);
        if (t < best * (1 - 1e-9)) best = t, choice = std::move(trial), changed = true;
      }
    }
    if (!changed) break;
  }
  return choice;
}

}  // namespace tessera::partitioner
