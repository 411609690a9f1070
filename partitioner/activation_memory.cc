#include "tessera/partitioner/activation_memory.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/memory/lifetime.h"

namespace tessera::partitioner {
namespace {

bool Split(Layout layout) { return layout != Layout::kReplicated; }

int64_t RoundUp(double bytes, int64_t alignment) {
  const auto b = static_cast<int64_t>(std::ceil(bytes));
  return (b + alignment - 1) / alignment * alignment;
}

// The extra buffers `layer` needs under `option`, appended to `out` with ids from `next_id`
// (and their names to `names`, when given).
void AddStrategyExtras(const Problem& problem, int layer, const LayerOption& option,
                       int64_t& next_id, std::vector<memory::Buffer>& out,
                       std::vector<std::string>* names = nullptr) {
  const int64_t forward = problem.forward_step[layer], backward = problem.backward_step[layer];
  const int64_t align = problem.lifetimes.alignment;
  const Layer& l = problem.layers[layer];
  const auto add = [&](int64_t start, int64_t end, double bytes, absl::string_view what) {
    if (bytes <= 0 || start < 0 || end <= start) return;
    if (names != nullptr) names->push_back(absl::StrCat(what, " (", l.name, ")"));
    out.push_back({.id = next_id++, .start = start, .end = end, .size = RoundUp(bytes, align),
                   .alignment = align});
  };
  if (option.strategy == Strategy::kModelParallel) {
    for (size_t k = 0; k < l.inputs.size(); ++k) {
      if (option.inputs[k] != Layout::kReplicated || problem.edges.size() <= size_t(l.inputs[k]))
        continue;
      const Edge& edge = problem.edges[l.inputs[k]];
      const int64_t last = backward >= 0 ? backward : forward;
      add(forward, last + 1, edge.bytes, "gathered input");
      if (edge.needs_grad && backward >= 0) {
        add(backward, backward + 1, edge.bytes, "partial input gradient");
      }
    }
  } else if (option.strategy == Strategy::kLateMultiply && backward >= 0) {
    add(backward, backward + 1, option.sync_bytes, "gathered X and dY");
  }
}

}  // namespace

std::vector<double> ActivationScale(const Problem& problem, const Choice& choice) {
  std::vector<double> scale(problem.num_nodes, 1.0);
  const double share = 1.0 / std::max(1, problem.options.devices);
  for (size_t i = 0; i < problem.layers.size(); ++i) {
    const graph::NodeId node = problem.layers[i].node;
    if (node < 0 || node >= problem.num_nodes) continue;
    scale[node] = Split(problem.layers[i].options[choice[i]].output) ? share : 1.0;
  }
  return scale;
}

namespace {

// DeviceTransientBuffers, with each extra buffer's name appended to `extra_names` when given
// (the lifetimes' buffers are named by their values).
std::vector<memory::Buffer> BuildTransientBuffers(const Problem& problem, const Choice& choice,
                                               std::vector<std::string>* extra_names) {
  std::vector<memory::Buffer> buffers =
      memory::TransientBuffers(problem.lifetimes, ActivationScale(problem, choice));
  const bool has_steps = problem.forward_step.size() == problem.layers.size() &&
                         problem.backward_step.size() == problem.layers.size();
  if (problem.options.devices <= 1 || !has_steps) return buffers;
  int64_t next_id = static_cast<int64_t>(problem.lifetimes.values.size());
  for (size_t i = 0; i < problem.layers.size(); ++i) {
    AddStrategyExtras(problem, static_cast<int>(i), problem.layers[i].options[choice[i]], next_id,
                      buffers, extra_names);
  }
  return buffers;
}

}  // namespace

std::vector<memory::Buffer> DeviceTransientBuffers(const Problem& problem, const Choice& choice) {
  return BuildTransientBuffers(problem, choice, nullptr);
}

int64_t ActivationPeak(const Problem& problem, const Choice& choice) {
  return memory::LiveBytesLowerBound(DeviceTransientBuffers(problem, choice));
}

absl::StatusOr<DeviceActivations> PlanDeviceActivations(const graph::Graph& graph,
                                                        const Plan& plan,
                                                        costmodel::OptimizerKind optimizer) {
  TS_ASSIGN_OR_RETURN(Problem problem,
                      BuildProblem(graph, nullptr, {.devices = plan.devices, .optimizer = optimizer}));
  if (problem.layers.size() != plan.layers.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the plan has ", plan.layers.size(), " layers but model '", graph.name(), "' has ",
        problem.layers.size(), "; plan the model again"));
  }
  Choice choice(problem.layers.size(), 0);
  for (size_t i = 0; i < problem.layers.size(); ++i) {
    choice[i] = FindOption(problem.layers[i], plan.layers[i].strategy);
    if (choice[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "layer '", problem.layers[i].name, "' cannot run ",
          StrategyName(plan.layers[i].strategy), "; the plan belongs to another model"));
    }
  }
  DeviceActivations result;
  std::vector<std::string> extra_names;
  result.buffers = BuildTransientBuffers(problem, choice, &extra_names);
  const size_t values = problem.lifetimes.values.size();
  for (const memory::Buffer& b : result.buffers) {
    if (b.id >= static_cast<int64_t>(values)) break;  // the extras follow the values' buffers
    const memory::Value& v = problem.lifetimes.values[b.id];
    result.names.push_back(v.name);
    result.kinds.emplace_back(memory::ValueKindName(v.kind));
  }
  result.names.insert(result.names.end(), extra_names.begin(), extra_names.end());
  result.kinds.resize(result.buffers.size(), "gathered");
  result.lifetimes = std::move(problem.lifetimes);
  return result;
}

}  // namespace tessera::partitioner
