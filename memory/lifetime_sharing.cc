// Memory sharing between values: views and in-place element-wise ops.
//
// Values that share memory form a group. Step 1 joins every view with its input (forward)
// and the view's output gradient with its input gradient (backward): the same bytes, read
// and accumulated as one buffer. Step 2 walks the schedule and lets an element-wise op hand
// a group over to its output (forward) or to an input's gradient (backward) when the old
// group is last used at this very step and the new one first appears there; so within a
// group, contents follow one another and overlap only at the step that overwrites.
#include <algorithm>
#include <vector>

#include "tessera/base/check.h"
#include "tessera/memory/lifetime_impl.h"

namespace tessera::memory::lifetime_internal {
namespace {

using graph::NodeId;
using graph::OpKind;
using graph::TensorId;

// Union-find over values with what the sharing rules ask of a whole group.
class Groups {
 public:
  Groups(const graph::Graph& g, std::vector<Value>& values) : values_(values) {
    const int64_t n = static_cast<int64_t>(values.size());
    parent_.resize(n);
    tree_root_.resize(n);
    info_.resize(n);
    std::vector<bool> is_output(g.num_tensors(), false);
    for (TensorId t : g.outputs()) is_output[t] = true;
    for (int64_t i = 0; i < n; ++i) {
      const Value& v = values[i];
      parent_[i] = tree_root_[i] = i;
      const bool forward_value = v.kind != ValueKind::kActivationGradient &&
                                 v.kind != ValueKind::kParameterGradient &&
                                 v.kind != ValueKind::kOptimizerState;
      info_[i] = {.first = v.first_step, .last = v.last_step, .bytes = v.bytes,
                  .persistent = IsPersistent(v.kind),
                  .data_input = v.kind == ValueKind::kDataInput,
                  .graph_output = forward_value && v.tensor >= 0 && is_output[v.tensor]};
    }
  }

  struct Info {
    int64_t first, last, bytes;
    bool persistent, data_input, graph_output;
  };

  int64_t Find(int64_t v) {
    while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
    return v;
  }
  const Info& info(int64_t v) { return info_[Find(v)]; }

  // `taker`'s group now lives in `given`'s memory.
  void Join(int64_t taker, int64_t given) {
    const int64_t a = Find(taker), b = Find(given);
    TS_CHECK(a != b) << "value " << taker << " already shares with " << given;
    TS_CHECK(values_[tree_root_[a]].shares_with < 0) << "group root already shares";
    values_[tree_root_[a]].shares_with = given;
    parent_[a] = b;
    Info& to = info_[b];
    const Info& from = info_[a];
    to.first = std::min(to.first, from.first);
    to.last = std::max(to.last, from.last);
    to.bytes = std::max(to.bytes, from.bytes);
    to.persistent = to.persistent || from.persistent;
    to.data_input = to.data_input || from.data_input;
    to.graph_output = to.graph_output || from.graph_output;
  }

 private:
  std::vector<Value>& values_;
  std::vector<int64_t> parent_;
  std::vector<int64_t> tree_root_;  // by union-find root: the value with shares_with == -1
  std::vector<Info> info_;
};

// Step 1: views share with their input, forward and backward.
void ShareViews(const graph::Graph& g, const ScheduleIndex& s, const ValueIndex& index,
                const std::set<std::string>& custom, std::vector<Value>& values, Groups& groups) {
  for (NodeId n : s.order) {  // topological: a view's output is still alone in its group
    const graph::Node& node = g.node(n);
    if (!IsViewOp(node.kind) || custom.contains(node.name)) continue;
    const TensorId in = node.inputs[0], out = node.outputs[0];
    const int64_t vin = index.of_tensor[in], vout = index.of_tensor[out];
    if (vin < 0 || vout < 0 || values[vin].bytes != values[vout].bytes) continue;
    if (groups.Find(vin) != groups.Find(vout)) groups.Join(vout, vin);
    const int64_t gin = index.grad_of[in], gout = index.grad_of[out];
    if (gin >= 0 && gout >= 0 && groups.Find(gin) != groups.Find(gout)) groups.Join(gout, gin);
  }
}

// Forward step s of node n: the output takes over an input's group.
void InPlaceForward(const graph::Node& node, int64_t s, const ValueIndex& index,
                    Groups& groups) {
  const int64_t out = index.of_tensor[node.outputs[0]];
  if (out < 0) return;
  for (int slot : InPlaceInputSlots(node.kind)) {
    if (slot >= static_cast<int>(node.inputs.size())) continue;
    const TensorId t = node.inputs[slot];
    const int64_t in = t == graph::kNoTensor ? -1 : index.of_tensor[t];
    if (in < 0 || groups.Find(in) == groups.Find(out)) continue;
    const Groups::Info old_group = groups.info(in), new_group = groups.info(out);
    if (old_group.persistent || old_group.data_input || old_group.graph_output) continue;
    if (old_group.last != s || new_group.first != s || new_group.persistent) continue;
    if (old_group.bytes != new_group.bytes) continue;
    groups.Join(out, in);
    return;
  }
}

// Backward step s of node n: an input's gradient takes over the output gradient's group.
void InPlaceBackward(const graph::Node& node, int64_t s, const ValueIndex& index,
                     Groups& groups) {
  const int64_t dy = index.grad_of[node.outputs[0]];
  if (dy < 0) return;
  for (int slot : InPlaceInputSlots(node.kind)) {
    if (slot >= static_cast<int>(node.inputs.size())) continue;
    const TensorId t = node.inputs[slot];
    const int64_t dx = t == graph::kNoTensor ? -1 : index.grad_of[t];
    if (dx < 0 || groups.Find(dx) == groups.Find(dy)) continue;
    const Groups::Info old_group = groups.info(dy), new_group = groups.info(dx);
    if (old_group.persistent || new_group.persistent) continue;
    if (old_group.last != s || new_group.first != s || old_group.bytes != new_group.bytes) {
      continue;
    }
    groups.Join(dx, dy);
    return;
  }
}

}  // namespace

void ShareMemory(const graph::Graph& g, const ScheduleIndex& s, const ValueIndex& index,
                 const std::set<std::string>& custom, std::vector<Value>& values) {
  Groups groups(g, values);
  ShareViews(g, s, index, custom, values, groups);
  // Step 2, in schedule order: forward steps, then backward steps.
  for (NodeId n : s.order) {
    if (!custom.contains(g.node(n).name)) InPlaceForward(g.node(n), s.forward_step[n], index, groups);
  }
  for (auto it = s.order.rbegin(); it != s.order.rend(); ++it) {
    const int64_t step = s.backward_step[*it];
    if (step >= 0 && !custom.contains(g.node(*it).name)) {
      InPlaceBackward(g.node(*it), step, index, groups);
    }
  }
}

}  // namespace tessera::memory::lifetime_internal

namespace tessera::memory {

std::vector<int> InPlaceInputSlots(graph::OpKind kind) {
  switch (kind) {
    case graph::OpKind::kAdd:
    case graph::OpKind::kSub:
    case graph::OpKind::kMul:
    case graph::OpKind::kDiv: return {0, 1};
    case graph::OpKind::kCast: return {};
    default: break;
  }
  const graph::OpSchema& schema = graph::GetOpSchema(kind);
  if (schema.op_class == graph::OpClass::kElementwise && schema.max_inputs == 1) return {0};
  return {};
}

bool IsViewOp(graph::OpKind kind) {
  switch (kind) {
    case graph::OpKind::kIdentity:
    case graph::OpKind::kReshape:
    case graph::OpKind::kFlatten:
    case graph::OpKind::kSqueeze:
    case graph::OpKind::kUnsqueeze: return true;
    default: return false;
  }
}

}  // namespace tessera::memory
