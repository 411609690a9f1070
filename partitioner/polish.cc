// Simulator-guided polish (docs/partitioner.md, "Polish").
#include "tessera/partitioner/polish.h"

#include <algorithm>
#include <vector>

#include "tessera/partitioner/objective.h"
#include "tessera/partitioner/simulate.h"

namespace tessera::partitioner {
namespace {

double StepTime(const Problem& problem, const Choice& choice) {
  return SimulateStep(problem, choice, false).step.step_time_s;
}

// The parameterless layers reached from layer i through parameterless layers only (both
// directions), at most kMaxRun of them: a Relu - Dropout chain after a Gemm, say.
constexpr int kMaxRun = 64;

std::vector<int> ParamlessRun(const Problem& problem,
                              const std::vector<std::vector<int>>& out_edges, int i) {
  std::vector<int> run, frontier = {i};
  std::vector<bool> seen(problem.layers.size(), false);
  seen[i] = true;
  while (!frontier.empty() && static_cast<int>(run.size()) < kMaxRun) {
    const int at = frontier.back();
    frontier.pop_back();
    std::vector<int> around;
    for (int e : out_edges[at]) {
      for (int j : problem.edges[e].consumers) around.push_back(j);
    }
    for (int e : problem.layers[at].inputs) {
      if (problem.edges[e].producer >= 0) around.push_back(problem.edges[e].producer);
    }
    for (int j : around) {
      if (seen[j] || problem.layers[j].kind != LayerKind::kParamless) continue;
      seen[j] = true;
      run.push_back(j);
      frontier.push_back(j);
      if (static_cast<int>(run.size()) == kMaxRun) break;
    }
  }
  return run;
}

// The part of TotalCost that depends on the options of the layers in `run`: their own
// costs and input transitions, and the transitions into their consumers outside the run.
double RunCost(const Problem& problem, const std::vector<std::vector<int>>& out_edges,
               const std::vector<int>& run, const Choice& choice) {
  std::vector<int> outside;
  double cost = 0;
  for (int j : run) {
    cost += OptionCost(problem.layers[j].options[choice[j]]) +
            InputsCost(problem, j, choice[j], choice);
    for (int e : out_edges[j]) {
      for (int c : problem.edges[e].consumers) {
        if (std::find(run.begin(), run.end(), c) == run.end()) outside.push_back(c);
      }
    }
  }
  std::sort(outside.begin(), outside.end());
  outside.erase(std::unique(outside.begin(), outside.end()), outside.end());
  for (int c : outside) cost += InputsCost(problem, c, choice[c], choice);
  return cost;
}

// Re-choose the parameterless layers around layer i for the cheapest run cost: first the
// whole run on one layout (so a chain of them can leave a feature split together, which
// one layer at a time cannot when its neighbour still holds it), then each layer alone.
void ReshapeNeighbours(const Problem& problem, const std::vector<std::vector<int>>& out_edges,
                       int i, Choice& choice) {
  const std::vector<int> run = ParamlessRun(problem, out_edges, i);
  if (run.empty()) return;
  double best_cost = RunCost(problem, out_edges, run, choice);
  for (Layout layout : {Layout::kBatch, Layout::kReplicated, Layout::kFeature}) {
    Choice trial = choice;
    for (int j : run) {
      const std::vector<LayerOption>& options = problem.layers[j].options;
      for (int k = 0; k < static_cast<int>(options.size()); ++k) {
        if (options[k].output == layout) trial[j] = k;
      }
    }
    const double c = RunCost(problem, out_edges, run, trial);
    if (c < best_cost) best_cost = c, choice = std::move(trial);
  }
  for (int j : run) {
    int best = choice[j];
    double best_local = NeighbourhoodCost(problem, out_edges, j, best, choice);
    for (int k = 0; k < static_cast<int>(problem.layers[j].options.size()); ++k) {
      const double c = NeighbourhoodCost(problem, out_edges, j, k, choice);
      if (c < best_local) best_local = c, best = k;
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
