// The training-step schedule and every value it holds, with first and last steps and sizes
// (the rules are in memory/lifetime.h and docs/lifetimes.md). No sharing here.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "tessera/base/check.h"
#include "tessera/memory/lifetime_impl.h"

namespace tessera::memory::lifetime_internal {
namespace {

using graph::NodeId;
using graph::TensorId;
using graph::TensorRole;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

bool Trainable(const graph::Graph& g, const costmodel::BackwardInfo& b, TensorId t) {
  return g.tensor(t).role == TensorRole::kParameter && b.needs_grad[t];
}

int64_t Bytes(const graph::Tensor& tensor) {
  const int64_t n = graph::NumElements(tensor.shape);
  const int64_t size = graph::DTypeSize(tensor.dtype);
  if (n <= 0) return 0;
  return n > kMax / size ? kMax : n * size;
}

// What a node saves for itself, for the saved value's name.
absl::string_view SavedSuffix(graph::OpKind kind) {
  switch (kind) {
    case graph::OpKind::kMaxPool: return "indices";
    case graph::OpKind::kDropout: return "mask";
    case graph::OpKind::kBatchNorm:
    case graph::OpKind::kLayerNorm: return "stats";
    case graph::OpKind::kSoftmaxCrossEntropy: return "probs";
    case graph::OpKind::kCtcLoss: return "alpha";
    case graph::OpKind::kLstm: return "gates";
    default: return "saved";
  }
}

// Per tensor: the first node reading it in forward order, and its last forward or backward use
// (the end of forward for a graph output); -1 when unused.
struct Uses {
  std::vector<NodeId> first_reader;
  std::vector<int64_t> last_use;
};

Uses FindUses(const graph::Graph& g, const costmodel::BackwardInfo& b, const ScheduleIndex& s) {
  Uses u;
  u.first_reader.assign(g.num_tensors(), graph::kNoNode);
  u.last_use.assign(g.num_tensors(), -1);
  for (NodeId n : s.order) {
    for (TensorId t : g.node(n).inputs) {
      if (t == graph::kNoTensor) continue;
      if (u.first_reader[t] == graph::kNoNode) u.first_reader[t] = n;
      u.last_use[t] = std::max(u.last_use[t], s.forward_step[n]);
    }
  }
  for (NodeId n = 0; n < g.num_nodes(); ++n) {
    if (s.backward_step[n] < 0) continue;
    for (TensorId t : b.nodes[n].reads) u.last_use[t] = std::max(u.last_use[t], s.backward_step[n]);
  }
  const int64_t end_of_forward = static_cast<int64_t>(s.order.size()) - 1;
  for (TensorId t : g.outputs()) u.last_use[t] = std::max(u.last_use[t], end_of_forward);
  return u;
}

// The value holding tensor t, or nothing for an activation no node produces.
bool TensorValue(const graph::Graph& g, const ScheduleIndex& s, const Uses& u, TensorId t,
                 Value& v) {
  const graph::Tensor& tensor = g.tensor(t);
  v = Value{.name = tensor.name, .tensor = t, .node = u.first_reader[t], .bytes = Bytes(tensor)};
  switch (tensor.role) {
    case TensorRole::kInput:
      v.kind = ValueKind::kDataInput;
      v.last_step = std::max<int64_t>(0, u.last_use[t]);
      return true;
    case TensorRole::kParameter:
    case TensorRole::kConstant:
      v.kind = tensor.role == TensorRole::kParameter ? ValueKind::kParameter : ValueKind::kConstant;
      v.last_step = s.num_steps - 1;
      return true;
    case TensorRole::kActivation:
      if (tensor.producer == graph::kNoNode) return false;
      v.kind = ValueKind::kActivation;
      v.node = tensor.producer;
      v.first_step = s.forward_step[tensor.producer];
      v.last_step = std::max(v.first_step, u.last_use[t]);
      return true;
  }
  return false;
}

// The gradient of activation t: from the first backward step of its consumers (or its
// producer's, for a graph output's seed) to its producer's backward step.
bool GradientValue(const graph::Graph& g, const ScheduleIndex& s,
                   const std::vector<std::vector<NodeId>>& consumers,
                   const std::vector<bool>& is_output, TensorId t, Value& v) {
  const graph::Tensor& tensor = g.tensor(t);
  if (tensor.role != TensorRole::kActivation || tensor.producer == graph::kNoNode) return false;
  const int64_t last = s.backward_step[tensor.producer];
  if (last < 0) return false;
  int64_t first = is_output[t] ? last : kMax;
  for (NodeId c : consumers[t]) {
    if (s.backward_step[c] >= 0) first = std::min(first, s.backward_step[c]);
  }
  if (first == kMax) return false;  // nothing reads it: its gradient is zero, never stored
  TS_CHECK(first <= last) << "gradient of '" << tensor.name << "' used before it exists";
  v = Value{.name = absl::StrCat("grad(", tensor.name, ")"),
            .kind = ValueKind::kActivationGradient,
            .tensor = t,
            .node = tensor.producer,
            .bytes = Bytes(tensor),
            .first_step = first,
            .last_step = last};
  return true;
}

std::vector<std::string> StateNames(int states, absl::string_view param) {
  if (states == 1) return {absl::StrCat("momentum(", param, ")")};
  if (states == 2) {
    return {absl::StrCat("adam_m(", param, ")"), absl::StrCat("adam_v(", param, ")")};
  }
  std::vector<std::string> names;
  for (int i = 0; i < states; ++i) names.push_back(absl::StrCat("state", i, "(", param, ")"));
  return names;
}

}  // namespace

ScheduleIndex BuildSchedule(const graph::Graph& g, const costmodel::BackwardInfo& b,
                            std::vector<NodeId> order, std::vector<Step>& steps) {
  ScheduleIndex s;
  s.order = std::move(order);
  s.forward_step.assign(g.num_nodes(), -1);
  s.backward_step.assign(g.num_nodes(), -1);
  for (NodeId n : s.order) {
    s.forward_step[n] = static_cast<int64_t>(steps.size());
    steps.push_back({Phase::kForward, n, g.node(n).name});
  }
  for (auto it = s.order.rbegin(); it != s.order.rend(); ++it) {
    if (!b.nodes[*it].has_backward) continue;
    s.backward_step[*it] = static_cast<int64_t>(steps.size());
    steps.push_back({Phase::kBackward, *it, g.node(*it).name});
  }
  for (TensorId t = 0; t < g.num_tensors(); ++t) {
    if (Trainable(g, b, t)) steps.push_back({Phase::kUpdate, graph::kNoNode, g.tensor(t).name});
  }
  s.num_steps = static_cast<int64_t>(steps.size());
  return s;
}

std::vector<Value> BuildValues(const graph::Graph& g, const costmodel::BackwardInfo& b,
                               const ScheduleIndex& s, int optimizer_states_per_param,
                               ValueIndex& index) {
  const Uses uses = FindUses(g, b, s);
  std::vector<Value> values;
  index.of_tensor.assign(g.num_tensors(), -1);
  index.grad_of.assign(g.num_tensors(), -1);
  const auto add = [&values](Value v) {
    values.push_back(std::move(v));
    return static_cast<int64_t>(values.size()) - 1;
  };
  Value v;
  // 1. Tensors: data inputs, parameters, constants, activations.
  for (TensorId t = 0; t < g.num_tensors(); ++t) {
    if (TensorValue(g, s, uses, t, v)) index.of_tensor[t] = add(std::move(v));
  }
  // 2. What nodes save for themselves, from their forward to their backward step.
  for (NodeId n : s.order) {
    const int64_t bytes = b.nodes[n].private_bytes;
    if (s.backward_step[n] < 0 || bytes <= 0) continue;
    add(Value{.name = absl::StrCat(g.node(n).name, ".", SavedSuffix(g.node(n).kind)),
              .kind = ValueKind::kSaved,
              .node = n,
              .bytes = bytes,
              .first_step = s.forward_step[n],
              .last_step = s.backward_step[n]});
  }
  // 3. Gradients of activations.
  const auto consumers = g.Consumers();
  std::vector<bool> is_output(g.num_tensors(), false);
  for (TensorId t : g.outputs()) is_output[t] = true;
  for (TensorId t = 0; t < g.num_tensors(); ++t) {
    if (b.needs_grad[t] && GradientValue(g, s, consumers, is_output, t, v)) {
      index.grad_of[t] = add(std::move(v));
    }
  }
  // 4. Parameter gradients, then optimizer state: persistent.
  for (TensorId t = 0; t < g.num_tensors(); ++t) {
    if (!Trainable(g, b, t)) continue;
    const Value& p = values[index.of_tensor[t]];
    index.grad_of[t] = add(Value{.name = absl::StrCat("grad(", p.name, ")"),
                                 .kind = ValueKind::kParameterGradient,
                                 .tensor = t, .node = p.node, .bytes = p.bytes,
                                 .last_step = s.num_steps - 1});
  }
  for (TensorId t = 0; t < g.num_tensors(); ++t) {
    if (!Trainable(g, b, t)) continue;
    const Value p = values[index.of_tensor[t]];
    for (std::string& name : StateNames(optimizer_states_per_param, p.name)) {
      add(Value{.name = std::move(name), .kind = ValueKind::kOptimizerState, .tensor = t,
                .node = p.node, .bytes = p.bytes, .last_step = s.num_steps - 1});
    }
  }
  return values;
}

}  // namespace tessera::memory::lifetime_internal
