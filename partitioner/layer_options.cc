// Strategy costs per layer. Notation: P devices, B global batch, compute share
// 1/P when the layer's work is split, 1 when replicated.
#include "tessera/partitioner/layer_options.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "tessera/costmodel/winograd.h"
#include "tessera/graph/op_kind.h"
#include "tessera/partitioner/runtime_dense.h"
#include "tessera/partitioner/runtime_feature.h"

namespace tessera::partitioner {
namespace {

using costmodel::Collective;
using graph::OpClass;
using graph::OpKind;

struct Ctx {
  const graph::Graph& graph;
  const costmodel::OpEstimate& estimate;
  const Layer& layer;
  const Problem& problem;
  const graph::Node& node;
  int p;
};

double TensorBytes(const graph::Graph& g, graph::TensorId t) {
  return static_cast<double>(graph::NumElements(g.tensor(t).shape) *
                             graph::DTypeSize(g.tensor(t).dtype));
}

std::string Mb(double bytes) { return absl::StrFormat("%.3g MB", bytes / 1e6); }

// Forward and backward compute of `share` of the op, plus `extra_backward_flops`: the cost
// model's price of the node's passes (measured, or from FLOPs and bytes).
void SetCompute(const Ctx& c, double share, double extra_backward_flops, LayerOption& o) {
  const costmodel::CostModel* cost = c.problem.comm.cost;
  if (cost == nullptr) return;
  const OpClass op_class = graph::GetOpSchema(c.node.kind).op_class;
  const graph::DType dtype = c.graph.tensor(c.node.outputs[0]).dtype;
  // Summed as doubles: each count saturates at int64's maximum (a hostile graph file's huge
  // tensors), so their int64 sum could overflow.
  const double bytes =
      static_cast<double>(c.estimate.bytes_read) + static_cast<double>(c.estimate.bytes_written);
  const bool winograd = costmodel::RunsAsWinograd(c.graph, c.node);
  o.forward_compute_s = cost->OpTime(
      {.flops = c.estimate.flops_forward * share, .bytes = bytes * share, .op_class = op_class,
       .dtype = dtype, .winograd = winograd, .kind = costmodel::WorkKind::kForward,
       .node = c.node.name, .share = share});
  o.backward_compute_s = cost->OpTime(
      {.flops = c.estimate.flops_backward * share + extra_backward_flops,
       .bytes = 2 * bytes * share, .op_class = op_class, .dtype = dtype, .winograd = winograd,
       .kind = costmodel::WorkKind::kBackward, .node = c.node.name, .share = share,
       .extra_flops = extra_backward_flops});
}

double OutputBytes(const Ctx& c) {
  double b = 0;
  for (graph::TensorId t : c.layer.outputs) b += TensorBytes(c.graph, t);
  return b;
}

// A layer computing on split (batch or feature) or replicated data.
LayerOption Base(const Ctx& c, Strategy s, Layout in, Layout out) {
  LayerOption o{.strategy = s, .inputs = std::vector<Layout>(c.layer.inputs.size(), in),
                .output = out};
  const bool split = out != Layout::kReplicated;
  const double share = split ? 1.0 / c.p : 1.0;
  SetCompute(c, share, 0, o);
  o.activation_bytes = static_cast<int64_t>(c.layer.activation_bytes * share);
  o.workspace_bytes = static_cast<int64_t>(OutputBytes(c) * share);
  return o;
}

// Data parallel: gradients of the parameters first read here are all-reduced in buckets.
void AddBucketedSync(const Ctx& c, LayerOption& o) {
  o.param_bytes = c.layer.owned_param_bytes;
  if (c.p <= 1 || o.param_bytes == 0) return;
  o.bucketed = true;
  o.sync_bytes = static_cast<double>(o.param_bytes);
  o.sync_s = o.sync_bytes * BucketedAllReduceRate(c.problem);
  o.sync_sent_bytes = c.problem.comm.SentBytes(Collective::kAllReduce, o.sync_bytes);
  o.detail = absl::StrFormat("all-reduces %s of gradients", Mb(o.sync_bytes));
}

LayerOption DataParallel(const Ctx& c) {
  LayerOption o = Base(c, Strategy::kDataParallel, Layout::kBatch, Layout::kBatch);
  AddBucketedSync(c, o);
  if (c.node.kind != OpKind::kEmbedding || c.p <= 1 || o.param_bytes == 0) return o;
  if (c.problem.options.executable) return o;  // the runtime all-reduces every gradient densely
  // Sparse gradient: gather the touched rows (ids x dim from every device) when that
  // is cheaper than the dense all-reduce.
  const double rows = TensorBytes(c.graph, c.node.outputs[0]);
  const double gather_s = c.problem.comm.Time(Collective::kAllGather, rows);
  if (gather_s < o.sync_s) {
    o.bucketed = false;
    o.sync_bytes = rows;
    o.sync_s = gather_s;
    o.sync_sent_bytes = c.problem.comm.SentBytes(Collective::kAllGather, rows);
    o.detail = absl::StrFormat("all-gathers %s of sparse gradient rows", Mb(rows));
  }
  return o;
}

int64_t OutputFeatures(const Ctx& c) {
  const graph::Shape& s = c.graph.tensor(c.node.outputs[0]).shape;
  if (s.empty()) return 0;
  return c.node.kind == OpKind::kConv ? (s.size() > 1 ? s[1] : 0) : s.back();
}

// Model parallel (output-feature split): replicated input, feature-split output,
// partial dX summed by the input transition in backward; no gradient sync.
LayerOption ModelParallel(const Ctx& c) {
  LayerOption o = Base(c, Strategy::kModelParallel, Layout::kReplicated, Layout::kFeature);
  // Compute share is 1/P (Base priced the replicated input as whole: redo).
  SetCompute(c, 1.0 / c.p, 0, o);
  o.activation_bytes = static_cast<int64_t>(c.layer.activation_bytes / c.p);
  o.workspace_bytes = static_cast<int64_t>(OutputBytes(c) / c.p);
  o.partial_dx = c.node.kind != OpKind::kEmbedding;
  o.param_bytes = c.layer.owned_param_bytes / c.p;
  double kept = 0;  // the replicated input, kept whole for dW
  for (int e : c.layer.inputs) {
    if (c.problem.edges[e].needs_grad || c.node.kind != OpKind::kEmbedding) {
      kept += c.problem.edges[e].bytes;
    }
  }
  o.activation_bytes += static_cast<int64_t>(kept);
  o.detail = absl::StrFormat("gathers its %s input, no gradient sync", Mb(kept));
  return o;
}

// Late multiply: batch split; backward all-gathers X (B x m) and dY (B x n) and forms
// dW = X^T dY locally: the dW FLOPs grow from 2(B/P)mn to 2Bmn.
LayerOption LateMultiply(const Ctx& c) {
  LayerOption o = Base(c, Strategy::kLateMultiply, Layout::kBatch, Layout::kBatch);
  const graph::Shape& x = c.graph.tensor(c.node.inputs[0]).shape;
  const graph::Shape& y = c.graph.tensor(c.node.outputs[0]).shape;
  const double m = static_cast<double>(x.back()), n = static_cast<double>(y.back());
  const double rows = static_cast<double>(graph::NumElements(y)) / n;
  const double extra = 2 * rows * m * n * (1.0 - 1.0 / c.p);
  SetCompute(c, 1.0 / c.p, extra, o);
  const double x_bytes = TensorBytes(c.graph, c.node.inputs[0]);
  const double dy_bytes = TensorBytes(c.graph, c.node.outputs[0]);
  o.param_bytes = c.layer.owned_param_bytes;
  o.sync_bytes = x_bytes + dy_bytes;
  o.sync_s = c.problem.comm.Time(Collective::kAllGather, x_bytes) +
             c.problem.comm.Time(Collective::kAllGather, dy_bytes);
  o.sync_sent_bytes = c.problem.comm.SentBytes(Collective::kAllGather, o.sync_bytes);
  o.workspace_bytes = static_cast<int64_t>(o.sync_bytes);
  o.detail = absl::StrFormat("all-gathers %s of X and dY", Mb(o.sync_bytes));
  return o;
}

// What the runtime runs of model parallelism: the layer reads and writes the batch layout and
// does its own collectives, blocking: all-gather X and all-to-all Y forward, all-to-all dY and
// reduce-scatter the partial dX backward (the transitions of ModelParallel folded in).
LayerOption ExecutableModelParallel(const Ctx& c) {
  LayerOption o = ModelParallel(c);
  const Edge& in = c.problem.edges[c.layer.inputs[0]];
  const double y = OutputBytes(c) / c.p;  // one device's share of Y, what the all-to-all moves
  const CommContext& comm = c.problem.comm;
  o.inputs.assign(c.layer.inputs.size(), Layout::kBatch);
  o.output = Layout::kBatch;
  o.partial_dx = false;
  o.forward_comm_s = comm.Time(Collective::kAllGather, in.bytes) + comm.Time(Collective::kAllToAll, y);
  o.backward_comm_s = comm.Time(Collective::kAllToAll, y) +
                      (in.needs_grad ? comm.Time(Collective::kReduceScatter, in.bytes) : 0);
  o.blocking_sent_bytes = comm.SentBytes(Collective::kAllGather, in.bytes) +
                          2 * comm.SentBytes(Collective::kAllToAll, y) +
                          (in.needs_grad ? comm.SentBytes(Collective::kReduceScatter, in.bytes) : 0);
  o.detail = absl::StrFormat("gathers its %s input and exchanges %s of output, no gradient sync",
                             Mb(in.bytes), Mb(y));
  return o;
}

// Parameterless ops may keep the feature split when they keep the feature axis.
bool AdmitsFeature(const Ctx& c) {
  const OpClass cls = graph::GetOpSchema(c.node.kind).op_class;
  switch (cls) {
    case OpClass::kElementwise:
    case OpClass::kPooling: return true;
    case OpClass::kSoftmax: {
      const auto* a = std::get_if<graph::AxisAttrs>(&c.node.attrs);
      const int64_t rank = static_cast<int64_t>(c.graph.tensor(c.node.outputs[0]).shape.size());
      return a == nullptr || a->axis == -1 || a->axis == rank - 1;
    }
    case OpClass::kLoss:
      return c.node.kind == OpKind::kSoftmaxCrossEntropy &&
             c.graph.tensor(c.node.inputs[0]).shape.size() == 2;
    case OpClass::kLayout: {
      const graph::Shape& out = c.graph.tensor(c.node.outputs[0]).shape;
      if (out.empty()) return false;
      for (graph::TensorId t : c.node.inputs) {
        if (t == graph::kNoTensor) continue;
        const graph::Shape& in = c.graph.tensor(t).shape;
        if (in.empty() || in.back() != out.back()) return false;
      }
      return true;
    }
    default: return false;
  }
}

// Softmax and cross-entropy over a feature-split last axis (the vocabulary-parallel softmax):
// forward, one all-reduce of the rows' max and then one of their sums of exponentials; a
// softmax's backward adds one of the rows' sum of dY * Y (the loss's gradient is local).
void AddRowReduction(const Ctx& c, LayerOption& o) {
  const graph::Shape& logits = c.graph.tensor(c.node.inputs[0]).shape;
  const double rows = static_cast<double>(graph::NumElements(logits)) / logits.back();
  const double row_bytes = rows * 4;
  const CommContext& comm = c.problem.comm;
  const int reductions = c.node.kind == OpKind::kSoftmaxCrossEntropy ? 2 : 3;
  o.forward_comm_s = 2 * comm.Time(Collective::kAllReduce, row_bytes);
  o.backward_comm_s = (reductions - 2) * comm.Time(Collective::kAllReduce, row_bytes);
  o.blocking_sent_bytes = reductions * comm.SentBytes(Collective::kAllReduce, row_bytes);
  o.detail = absl::StrFormat("all-reduces %s of row max/sum", Mb(reductions * row_bytes));
}

std::vector<LayerOption> SplitOrReplicated(const Ctx& c, bool with_params) {
  std::vector<LayerOption> options;
  LayerOption batch = Base(c, Strategy::kDataParallel, Layout::kBatch, Layout::kBatch);
  if (with_params) AddBucketedSync(c, batch);
  options.push_back(batch);
  const bool executable = c.problem.options.executable;
  // The runtime keeps parameterised and replicated layers on the batch.
  if (executable && (with_params || c.p <= 1)) return options;
  if (!with_params && c.p > 1 && AdmitsFeature(c) &&
      (!executable || RuntimeFeatureObstacle(c.graph, c.node, c.p).empty())) {
    LayerOption f = Base(c, Strategy::kModelParallel, Layout::kFeature, Layout::kFeature);
    const OpClass cls = graph::GetOpSchema(c.node.kind).op_class;
    if (cls == OpClass::kSoftmax || cls == OpClass::kLoss) AddRowReduction(c, f);
    if (c.node.kind == OpKind::kSoftmaxCrossEntropy) f.inputs[1] = Layout::kReplicated;
    options.push_back(f);
  }
  if (c.p > 1 && !executable) {
    LayerOption r = Base(c, Strategy::kReplicated, Layout::kReplicated, Layout::kReplicated);
    r.param_bytes = c.layer.owned_param_bytes;  // full gradients computed locally: no sync
    options.push_back(r);
  }
  return options;
}

}  // namespace

double BucketedAllReduceRate(const Problem& problem) {
  const double bucket = static_cast<double>(std::max<int64_t>(1, problem.options.buckets.bytes));
  return problem.comm.Time(Collective::kAllReduce, bucket) / bucket;
}

std::vector<LayerOption> BuildLayerOptions(const graph::Graph& graph,
                                           const costmodel::OpEstimate& estimate,
                                           const Layer& layer, const Problem& problem) {
  const Ctx c{graph, estimate, layer, problem, graph.node(layer.node), problem.options.devices};
  switch (layer.kind) {
    case LayerKind::kDense: {
      std::vector<LayerOption> options = {DataParallel(c)};
      if (problem.options.executable) {
        if (c.p <= 1 || layer.inputs.size() != 1) return options;
        if (OutputFeatures(c) % c.p == 0 &&
            RuntimeDenseObstacle(c.graph, c.node, Strategy::kModelParallel).empty()) {
          options.push_back(ExecutableModelParallel(c));
          // Leaving Y on the feature layout for feature-split consumers (the vocabulary-
          // parallel loss); after the folded form, which plan files without layouts name.
          if (c.node.kind != OpKind::kEmbedding) options.push_back(ModelParallel(c));
        }
        if (RuntimeDenseObstacle(c.graph, c.node, Strategy::kLateMultiply).empty()) {
          options.push_back(LateMultiply(c));
        }
        return options;
      }
      if (c.p > 1 && OutputFeatures(c) >= c.p && layer.inputs.size() == 1) {
        options.push_back(ModelParallel(c));
      }
      const bool matmul = c.node.kind == OpKind::kGemm || c.node.kind == OpKind::kMatMul;
      if (c.p > 1 && matmul && layer.inputs.size() == 1) options.push_back(LateMultiply(c));
      return options;
    }
    case LayerKind::kRecurrent: {
      LayerOption o = Base(c, Strategy::kDataParallel, Layout::kBatch, Layout::kBatch);
      AddBucketedSync(c, o);
      return {o};
    }
    case LayerKind::kParamOther: return SplitOrReplicated(c, true);
    case LayerKind::kParamless: return SplitOrReplicated(c, false);
  }
  return {};
}

}  // namespace tessera::partitioner
