#include "tessera/graph/attach_loss.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/shape_inference.h"

namespace tessera::graph {
namespace {

// What is added to the graph: new data inputs, then nodes writing one new tensor each. New
// tensors take ids from graph.num_tensors() on, in that order (the inputs, then each output).
struct Addition {
  std::vector<Tensor> inputs;
  struct NewNode {
    Node node;  // its output is set when added
    Tensor output;
  };
  std::vector<NewNode> nodes;
};

// A fresh name for a tensor or node: `base`, or `base_1`, `base_2`, ... when taken.
std::string FreshName(const Graph& g, const std::string& base) {
  const auto taken = [&](const std::string& name) {
    if (g.FindTensor(name)) return true;
    return std::any_of(g.nodes().begin(), g.nodes().end(),
                       [&](const Node& n) { return n.name == name; });
  };
  std::string name = base;
  for (int k = 1; taken(name); ++k) name = absl::StrCat(base, "_", k);
  return name;
}

absl::Status CheckNameFree(const Graph& g, const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("the target input needs a name");
  if (auto t = g.FindTensor(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", name, "' already names a tensor of the model (role: ",
        TensorRoleName(g.tensor(*t).role), "); name the target input something else"));
  }
  return absl::OkStatus();
}

Tensor DataInput(const std::string& name, Shape shape) {
  return Tensor{.name = name, .shape = std::move(shape), .dtype = DType::kI64,
                .role = TensorRole::kInput, .batch_axis = 0};
}

absl::Status NotLogits(const Tensor& out, absl::string_view wanted) {
  return absl::InvalidArgumentError(absl::StrCat(
      "the model's first output '", out.name, "' is ", ShapeString(out.shape), " ",
      DTypeName(out.dtype), ", not logits ", wanted, "; export the model so that its first "
      "output is the logits"));
}

absl::StatusOr<Addition> CrossEntropy(const Graph& g, TensorId logits, const std::string& target) {
  const Tensor& out = g.tensor(logits);
  if (out.shape.size() < 2 || !IsFloating(out.dtype) || out.shape[1] < 2) {
    return NotLogits(out, "[N, C, ...] (floating, C >= 2 classes on axis 1)");
  }
  Shape labels = out.shape;
  labels.erase(labels.begin() + 1);
  Addition a;
  a.inputs.push_back(DataInput(target, labels));
  a.nodes.push_back({.node = {.name = FreshName(g, "loss"), .kind = OpKind::kSoftmaxCrossEntropy,
                              .inputs = {logits, static_cast<TensorId>(g.num_tensors())},
                              .attrs = LossAttrs{}},
                     .output = {.name = FreshName(g, "loss")}});
  return a;
}

// The logits' LogSoftmax over the classes, unless they come out of one.
bool IsLogSoftmaxOverLast(const Graph& g, TensorId t) {
  const NodeId p = g.tensor(t).producer;
  if (p == kNoNode || g.node(p).kind != OpKind::kLogSoftmax) return false;
  const auto* a = std::get_if<AxisAttrs>(&g.node(p).attrs);
  return a != nullptr && NormalizeAxis(a->axis, 3) == 2;
}

absl::StatusOr<Addition> Ctc(const Graph& g, TensorId logits, const std::string& target) {
  const Tensor& out = g.tensor(logits);
  if (out.shape.size() != 3 || !IsFloating(out.dtype) || out.shape[2] < 2) {
    return NotLogits(out, "[T, N, C] (time-major, floating, C >= 2 classes with blank 0)");
  }
  const int64_t frames = out.shape[0], n = out.shape[1];
  Addition a;
  for (const std::string& name : {absl::StrCat(target, "_input_lengths"),
                                  absl::StrCat(target, "_target_lengths")}) {
    TS_RETURN_IF_ERROR(CheckNameFree(g, name));
  }
  a.inputs = {DataInput(target, {n, std::max<int64_t>(1, frames / 2)}),
              DataInput(absl::StrCat(target, "_input_lengths"), {n}),
              DataInput(absl::StrCat(target, "_target_lengths"), {n})};
  const TensorId first_new = static_cast<TensorId>(g.num_tensors());
  TensorId log_probs = logits;
  if (!IsLogSoftmaxOverLast(g, logits)) {
    const std::string name = FreshName(g, "log_probs");
    log_probs = first_new + 3;
    a.nodes.push_back({.node = {.name = name, .kind = OpKind::kLogSoftmax, .inputs = {logits},
                                .attrs = AxisAttrs{2}},
                       .output = {.name = name}});
  }
  a.nodes.push_back({.node = {.name = FreshName(g, "loss"), .kind = OpKind::kCtcLoss,
                              .inputs = {log_probs, first_new, first_new + 1, first_new + 2},
                              .attrs = LossAttrs{}},
                     .output = {.name = FreshName(g, "loss")}});
  return a;
}

// `g` with `a` added and the last new tensor (the loss) as the first output. Tensors and nodes
// keep their ids: they are added in the same order.
absl::StatusOr<Graph> Rebuild(const Graph& g, Addition a) {
  Graph out(g.name());
  for (const Tensor& t : g.tensors()) TS_RETURN_IF_ERROR(out.AddTensor(t).status());
  for (const Node& n : g.nodes()) TS_RETURN_IF_ERROR(out.AddNode(n).status());
  for (Tensor& t : a.inputs) TS_RETURN_IF_ERROR(out.AddTensor(std::move(t)).status());
  TensorId loss = kNoTensor;
  for (Addition::NewNode& n : a.nodes) {
    TS_ASSIGN_OR_RETURN(loss, out.AddTensor(std::move(n.output)));
    n.node.outputs = {loss};
    TS_RETURN_IF_ERROR(out.AddNode(std::move(n.node)).status());
  }
  out.AddOutput(loss);
  for (TensorId t : g.outputs()) out.AddOutput(t);
  TS_RETURN_IF_ERROR(InferShapes(out));
  TS_RETURN_IF_ERROR(out.Validate());
  return out;
}

}  // namespace

std::string ExistingLoss(const Graph& graph) {
  for (const Node& n : graph.nodes()) {
    if (GetOpSchema(n.kind).op_class == OpClass::kLoss) {
      return absl::StrCat("node '", n.name, "' (", OpName(n.kind), ")");
    }
  }
  if (graph.outputs().empty()) return "";
  const Tensor& first = graph.tensor(graph.outputs()[0]);
  if (first.shape.empty() && IsFloating(first.dtype)) {
    return absl::StrCat("its first output '", first.name, "', a scalar");
  }
  return "";
}

absl::StatusOr<Graph> AttachLoss(const Graph& graph, const AttachLossOptions& options) {
  if (const std::string loss = ExistingLoss(graph); !loss.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the model already has a loss (", loss, "); train it as it is, without --loss"));
  }
  if (graph.outputs().empty()) {
    return absl::InvalidArgumentError("the model has no outputs; it needs logits to attach a loss to");
  }
  TS_RETURN_IF_ERROR(CheckNameFree(graph, options.target));
  const TensorId logits = graph.outputs()[0];
  absl::StatusOr<Addition> a = options.kind == AttachedLoss::kCtc
                                   ? Ctc(graph, logits, options.target)
                                   : CrossEntropy(graph, logits, options.target);
  if (!a.ok()) return a.status();
  return Rebuild(graph, *std::move(a));
}

}  // namespace tessera::graph
