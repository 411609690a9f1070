// Graph-wide facts for the per-op estimates, the node view and the dispatch.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/base/check.h"
#include "tessera/costmodel/op_estimate_impl.h"
#include "tessera/graph/parameters.h"

namespace tessera::costmodel::estimate {
namespace {

using graph::kNoTensor;
using graph::OpKind;
using graph::TensorRole;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

std::vector<graph::NodeId> Order(const graph::Graph& g) {
  auto order = g.TopologicalOrder();
  if (order.ok()) return *std::move(order);
  std::vector<graph::NodeId> ids(g.num_nodes());
  for (graph::NodeId n = 0; n < g.num_nodes(); ++n) ids[n] = n;
  return ids;
}

bool ValidTensor(const graph::Graph& g, graph::TensorId t) {
  return t >= 0 && t < g.num_tensors();
}

}  // namespace

int64_t SatAdd(int64_t a, int64_t b) { return b > kMax - a ? kMax : a + b; }

int64_t BytesOf(double elements, int64_t elem_size) {
  const double bytes = elements * static_cast<double>(elem_size);
  if (!(bytes > 0)) return 0;
  if (bytes >= static_cast<double>(kMax)) return kMax;
  return static_cast<int64_t>(std::llround(bytes));
}

double Elements(const graph::Shape& shape) {
  double n = 1;
  for (int64_t d : shape) {
    if (d <= 0) return 0;
    n *= static_cast<double>(d);
  }
  return n;
}

int64_t TensorBytes(const graph::Tensor& tensor) {
  return BytesOf(Elements(tensor.shape), graph::DTypeSize(tensor.dtype));
}

int64_t Dim(const graph::Shape& shape, int64_t i) {
  if (i < 0) i += static_cast<int64_t>(shape.size());
  return i >= 0 && i < static_cast<int64_t>(shape.size()) ? shape[i] : 1;
}

GraphFacts AnalyzeGraph(const graph::Graph& g) {
  GraphFacts f;
  f.sources = graph::ParameterSources(g);
  f.needs_grad.assign(g.num_tensors(), false);
  f.depends_on_data.assign(g.num_tensors(), false);
  f.derivation.assign(g.num_nodes(), false);
  for (graph::TensorId t = 0; t < g.num_tensors(); ++t) {
    const graph::Tensor& tensor = g.tensor(t);
    f.needs_grad[t] = tensor.role == TensorRole::kParameter && graph::IsFloating(tensor.dtype);
    f.depends_on_data[t] = tensor.role == TensorRole::kInput;
  }
  for (graph::NodeId id : Order(g)) {
    f.derivation[id] = graph::IsParameterDerivation(g, id, f.sources);
    bool grad = false, data = false;
    for (graph::TensorId t : g.node(id).inputs) {
      if (!ValidTensor(g, t)) continue;
      grad = grad || f.needs_grad[t];
      data = data || f.depends_on_data[t];
    }
    for (graph::TensorId out : g.node(id).outputs) {
      if (!ValidTensor(g, out)) continue;
      f.needs_grad[out] = grad && graph::IsFloating(g.tensor(out).dtype);
      f.depends_on_data[out] = data;
    }
  }
  return f;
}

NodeView::NodeView(const graph::Graph& graph, graph::NodeId id, const GraphFacts& facts)
    : graph_(graph), node_(graph.node(id)), facts_(facts) {}

bool NodeView::has_input(int i) const {
  return i >= 0 && i < static_cast<int>(node_.inputs.size()) &&
         ValidTensor(graph_, node_.inputs[i]);
}

graph::TensorId NodeView::input_id(int i) const {
  return has_input(i) ? node_.inputs[i] : kNoTensor;
}

const graph::Shape& NodeView::in_shape(int i) const {
  static const graph::Shape kEmpty;
  return has_input(i) ? graph_.tensor(node_.inputs[i]).shape : kEmpty;
}

double NodeView::in_elements(int i) const { return has_input(i) ? Elements(in_shape(i)) : 0; }

int64_t NodeView::in_dtype_size(int i) const {
  return has_input(i) ? graph::DTypeSize(graph_.tensor(node_.inputs[i]).dtype) : 0;
}

bool NodeView::has_output(int i) const {
  return i >= 0 && i < static_cast<int>(node_.outputs.size()) &&
         ValidTensor(graph_, node_.outputs[i]);
}

graph::TensorId NodeView::output_id(int i) const {
  return has_output(i) ? node_.outputs[i] : kNoTensor;
}

const graph::Shape& NodeView::out_shape(int i) const {
  static const graph::Shape kEmpty;
  return has_output(i) ? graph_.tensor(node_.outputs[i]).shape : kEmpty;
}

double NodeView::out_elements(int i) const { return has_output(i) ? Elements(out_shape(i)) : 0; }

bool NodeView::needs_grad(int i) const {
  return has_input(i) && facts_.needs_grad[node_.inputs[i]];
}

bool NodeView::any_input_needs_grad() const {
  for (int i = 0; i < static_cast<int>(node_.inputs.size()); ++i) {
    if (needs_grad(i)) return true;
  }
  return false;
}

NodeCost CostNode(const graph::Graph& graph, graph::NodeId id, const GraphFacts& facts) {
  TS_CHECK(id >= 0 && id < graph.num_nodes()) << "node id " << id;
  if (facts.derivation[id]) return NodeCost{};  // weight re-layout: not per-sample compute
  return CostOp(graph, id, facts);
}

NodeCost CostOp(const graph::Graph& graph, graph::NodeId id, const GraphFacts& facts) {
  TS_CHECK(id >= 0 && id < graph.num_nodes()) << "node id " << id;
  const NodeView v(graph, id, facts);
  switch (v.kind()) {
    case OpKind::kConv: return CostConv(v);
    case OpKind::kGemm: return CostGemm(v);
    case OpKind::kMatMul: return CostMatMul(v);
    case OpKind::kEmbedding: return CostEmbedding(v);
    case OpKind::kLstm: return CostLstm(v);
    case OpKind::kBatchNorm:
    case OpKind::kLayerNorm: return CostNormalization(v);
    case OpKind::kMaxPool:
    case OpKind::kAveragePool:
    case OpKind::kGlobalAveragePool: return CostPool(v);
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kPow: return CostBinary(v);
    case OpKind::kWhere: return CostWhere(v);
    case OpKind::kReduceMean:
    case OpKind::kReduceSum:
    case OpKind::kReduceMax: return CostReduce(v);
    case OpKind::kSoftmax:
    case OpKind::kLogSoftmax: return CostSoftmax(v);
    case OpKind::kSoftmaxCrossEntropy: return CostSoftmaxCrossEntropy(v);
    case OpKind::kCtcLoss: return CostCtcLoss(v);
    default: break;
  }
  return graph::GetOpSchema(v.kind()).op_class == graph::OpClass::kLayout ? CostLayout(v)
                                                                          : CostUnary(v);
}

}  // namespace tessera::costmodel::estimate
