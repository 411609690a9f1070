// Dynamic programming over live-tensor layouts (docs/partitioner.md, "Exact planner").
#include "tessera/partitioner/exact_planner.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "tessera/partitioner/objective.h"

namespace tessera::partitioner {
namespace {

// One DP state after a layer: layouts of the live tensors (in `live` order).
struct State {
  std::string key;  // one byte per live tensor: its Layout
  double cost = 0;
  int parent = -1;  // state index after the previous layer
  int option = -1;  // the option this layer took
};

// Edges whose producer is a layer and whose last consumer is layer i.
std::vector<std::vector<int>> DyingAt(const Problem& problem) {
  std::vector<std::vector<int>> dying(problem.layers.size());
  for (int e = 0; e < static_cast<int>(problem.edges.size()); ++e) {
    const Edge& edge = problem.edges[e];
    if (edge.producer >= 0 && !edge.consumers.empty()) dying[edge.consumers.back()].push_back(e);
  }
  return dying;
}

void Prune(std::vector<State>& states, int max_states) {
  std::nth_element(states.begin(), states.begin() + max_states, states.end(),
                   [](const State& a, const State& b) { return a.cost < b.cost; });
  states.resize(max_states);
}

}  // namespace

ExactResult PlanExact(const Problem& problem, int max_states) {
  const int n = static_cast<int>(problem.layers.size());
  const std::vector<std::vector<int>> out_edges = OutEdges(problem);
  const std::vector<std::vector<int>> dying = DyingAt(problem);
  ExactResult result;
  std::vector<int> live;                              // edge ids, in state-key order
  std::vector<int> position(problem.edges.size(), -1);  // edge -> index in `live`
  std::vector<std::vector<State>> history(n);
  std::vector<State> current = {State{}};
  for (int i = 0; i < n; ++i) {
    const Layer& layer = problem.layers[i];
    // The live list after this layer: drop tensors read for the last time, add outputs.
    std::vector<int> next_live;
    std::vector<int> keep;  // positions in `live` that survive
    for (int p = 0; p < static_cast<int>(live.size()); ++p) {
      const int e = live[p];
      if (std::find(dying[i].begin(), dying[i].end(), e) == dying[i].end()) {
        keep.push_back(p);
        next_live.push_back(e);
      }
    }
    int produced = 0;
    for (int e : out_edges[i]) {
      if (!problem.edges[e].consumers.empty()) next_live.push_back(e), ++produced;
    }
    std::vector<State> next;
    absl::flat_hash_map<std::string, int> index;
    for (int s = 0; s < static_cast<int>(current.size()); ++s) {
      const State& state = current[s];
      for (int k = 0; k < static_cast<int>(layer.options.size()); ++k) {
        const LayerOption& o = layer.options[k];
        double cost = state.cost + OptionCost(o);
        for (size_t in = 0; in < layer.inputs.size(); ++in) {
          const int e = layer.inputs[in];
          const Layout from = problem.edges[e].producer < 0
                                  ? Layout::kBatch
                                  : static_cast<Layout>(state.key[position[e]]);
          const TransitionCost& t = EdgeTransition(problem, e, from, o.inputs[in], o.partial_dx);
          cost += t.forward_s + t.backward_s;
        }
        std::string key;
        key.reserve(next_live.size());
        for (int p : keep) key.push_back(state.key[p]);
        key.append(produced, static_cast<char>(o.output));
        auto [it, inserted] = index.try_emplace(key, static_cast<int>(next.size()));
        if (inserted) {
          next.push_back({std::move(key), cost, s, k});
        } else if (cost < next[it->second].cost) {
          next[it->second].cost = cost, next[it->second].parent = s, next[it->second].option = k;
        }
      }
    }
    if (static_cast<int>(next.size()) > max_states) {
      Prune(next, max_states);
      result.exact = false;
    }
    result.max_states = std::max<int64_t>(result.max_states, next.size());
    for (int e : live) position[e] = -1;
    live = std::move(next_live);
    for (int p = 0; p < static_cast<int>(live.size()); ++p) position[live[p]] = p;
    // Keep only the back-pointers; keys are not needed once the layer is done.
    history[i] = next;
    current = std::move(next);
    for (State& st : history[i]) st.key.clear(), st.key.shrink_to_fit();
  }
  // Trace back from the cheapest final state.
  result.choice.assign(n, 0);
  int s = 0;
  for (int k = 1; k < static_cast<int>(current.size()); ++k) {
    if (current[k].cost < current[s].cost) s = k;
  }
  result.cost = current.empty() ? 0 : current[s].cost;
  for (int i = n - 1; i >= 0; --i) {
    result.choice[i] = history[i][s].option;
    s = history[i][s].parent;
  }
  return result;
}

}  // namespace tessera::partitioner
