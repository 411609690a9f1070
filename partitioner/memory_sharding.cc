// Memory-aware sharding (docs/partitioner.md, "Memory-aware sharding").
#include "tessera/partitioner/memory_sharding.h"

#include <algorithm>
#include <limits>

#include "tessera/partitioner/objective.h"
#include "tessera/partitioner/simulate.h"

namespace tessera::partitioner {

Choice MinimumMemoryChoice(const Problem& problem) {
  Choice choice(problem.layers.size(), 0);
  for (size_t i = 0; i < problem.layers.size(); ++i) {
    const std::vector<LayerOption>& options = problem.layers[i].options;
    for (int k = 1; k < static_cast<int>(options.size()); ++k) {
      if (LayerMemory(problem, options[k]) < LayerMemory(problem, options[choice[i]])) {
        choice[i] = k;
      }
    }
  }
  return choice;
}

ShardResult ShardToFit(const Problem& problem, Choice choice, int64_t device_capacity_bytes) {
  ShardResult result;
  const std::vector<std::vector<int>> out_edges = OutEdges(problem);
  const int n = static_cast<int>(problem.layers.size());
  while (true) {
    const MemoryPrediction memory = PredictMemory(problem, choice, device_capacity_bytes);
    if (memory.fits) break;
    // Step 1: the switch with the most bytes freed per second added.
    int best_layer = -1, best_option = -1;
    double best_score = -1;
    for (int i = 0; i < n; ++i) {
      const Layer& layer = problem.layers[i];
      const int64_t held = LayerMemory(problem, layer.options[choice[i]]);
      const double now = NeighbourhoodCost(problem, out_edges, i, choice[i], choice);
      for (int k = 0; k < static_cast<int>(layer.options.size()); ++k) {
        const int64_t saved = held - LayerMemory(problem, layer.options[k]);
        if (k == choice[i] || saved <= 0) continue;
        const double added = NeighbourhoodCost(problem, out_edges, i, k, choice) - now;
        const double score = saved / std::max(added, 1e-12);
        if (score > best_score) best_score = score, best_layer = i, best_option = k;
      }
    }
    // Step 2: nothing left that saves memory: it does not fit at this device count.
    if (best_layer < 0) break;
    choice[best_layer] = best_option;
    result.switched.push_back(best_layer);
  }
  result.fits = PredictMemory(problem, choice, device_capacity_bytes).fits;
  result.choice = std::move(choice);
  return result;
}

}  // namespace tessera::partitioner
