// The heuristic planner (docs/partitioner.md, "Heuristic planner").
#include "tessera/partitioner/heuristic_planner.h"

#include "tessera/partitioner/layer_options.h"
#include "tessera/partitioner/objective.h"

namespace tessera::partitioner {

double ComputeHeavyThreshold(const Problem& problem) {
  if (problem.comm.cost == nullptr || problem.options.devices <= 1) return 0;
  const double probe = 1e12;
  const double seconds = problem.comm.cost->OpTime(
      {.flops = probe, .bytes = 0, .op_class = graph::OpClass::kDense});
  if (seconds <= 0) return 0;
  return kComputeHeavyFactor * (probe / seconds) * BucketedAllReduceRate(problem);
}

bool IsComputeHeavy(const Problem& problem, const Layer& layer) {
  if (layer.kind != LayerKind::kDense && layer.kind != LayerKind::kRecurrent) return false;
  return layer.flops_per_param_byte >= ComputeHeavyThreshold(problem);
}

Choice PlanGreedy(const Problem& problem, const std::vector<int>& forced) {
  const int n = static_cast<int>(problem.layers.size());
  Choice choice(n, 0);
  // Pass 1: in topological order, each layer's cheapest option given its producers.
  for (int i = 0; i < n; ++i) {
    if (forced[i] >= 0) {
      choice[i] = forced[i];
      continue;
    }
    double best = -1;
    for (int k = 0; k < static_cast<int>(problem.layers[i].options.size()); ++k) {
      const double c = OptionCost(problem.layers[i].options[k]) + InputsCost(problem, i, k, choice);
      if (best < 0 || c < best) best = c, choice[i] = k;
    }
  }
  // Refinement: re-choose each free layer against producers and consumers.
  const std::vector<std::vector<int>> out = OutEdges(problem);
  for (int pass = 0; pass < kRefinePasses; ++pass) {
    bool changed = false;
    for (int i = 0; i < n; ++i) {
      if (forced[i] >= 0) continue;
      double best = NeighbourhoodCost(problem, out, i, choice[i], choice);
      for (int k = 0; k < static_cast<int>(problem.layers[i].options.size()); ++k) {
        const double c = NeighbourhoodCost(problem, out, i, k, choice);
        if (c < best * (1 - 1e-12) - 1e-15) best = c, choice[i] = k, changed = true;
      }
    }
    if (!changed) break;
  }
  return choice;
}

Choice PlanHeuristic(const Problem& problem) {
  std::vector<int> forced(problem.layers.size(), -1);
  for (size_t i = 0; i < problem.layers.size(); ++i) {
    if (IsComputeHeavy(problem, problem.layers[i])) {
      forced[i] = FindOption(problem.layers[i], Strategy::kDataParallel);
    }
  }
  return PlanGreedy(problem, forced);
}

}  // namespace tessera::partitioner
