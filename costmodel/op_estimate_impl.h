// Internal to the per-op estimates (costmodel/op_estimate.h): graph-wide facts,
// a read-only view of one node, and one cost function per op family.
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "tessera/graph/graph.h"

namespace tessera::costmodel::estimate {

// Facts about every tensor and node that the per-op estimates need.
struct GraphFacts {
  std::vector<std::vector<graph::TensorId>> sources;  // graph::ParameterSources
  std::vector<bool> needs_grad;       // per tensor: floating and computed from a parameter
  std::vector<bool> depends_on_data;  // per tensor: a data input or computed from one
  std::vector<bool> derivation;       // per node: graph::IsParameterDerivation
};
GraphFacts AnalyzeGraph(const graph::Graph& graph);

// What one node costs before kept tensors are attributed to their producers.
struct NodeCost {
  double flops_forward = 0;
  double flops_backward = 0;
  std::vector<graph::TensorId> keeps;  // inputs/outputs its backward reads
  int64_t private_keep_bytes = 0;      // masks, indices and statistics it saves itself
};

// Saturating int64 arithmetic for byte counts of hostile shapes.
int64_t SatAdd(int64_t a, int64_t b);
// Bytes of `elements` values of `elem_size` bytes, clamped to [0, INT64_MAX].
int64_t BytesOf(double elements, int64_t elem_size);
// Bytes of a tensor (elements times dtype size).
int64_t TensorBytes(const graph::Tensor& tensor);
// Product of the dimensions as a double (0 if any is <= 0; 1 for a scalar).
double Elements(const graph::Shape& shape);
// Dimension i, or 1 when the shape is too short (never crashes on bad shapes).
int64_t Dim(const graph::Shape& shape, int64_t i);

class NodeView {
 public:
  NodeView(const graph::Graph& graph, graph::NodeId id, const GraphFacts& facts);

  const graph::Node& node() const { return node_; }
  graph::OpKind kind() const { return node_.kind; }
  bool has_input(int i) const;
  graph::TensorId input_id(int i) const;          // kNoTensor when absent
  const graph::Shape& in_shape(int i) const;      // empty when absent
  double in_elements(int i) const;                // 0 when absent
  int64_t in_dtype_size(int i) const;             // 0 when absent
  bool has_output(int i) const;
  graph::TensorId output_id(int i) const;
  const graph::Shape& out_shape(int i = 0) const;
  double out_elements(int i = 0) const;
  // Input i is present and a gradient flows to it.
  bool needs_grad(int i) const;
  bool any_input_needs_grad() const;
  // The node's attributes, or defaults when they are of another op's type.
  template <typename T>
  T attrs() const {
    const T* a = std::get_if<T>(&node_.attrs);
    return a ? *a : T{};
  }

 private:
  const graph::Graph& graph_;
  const graph::Node& node_;
  const GraphFacts& facts_;
};

// One function per op family; each fills FLOPs and what the backward keeps.
NodeCost CostConv(const NodeView& v);
NodeCost CostGemm(const NodeView& v);
NodeCost CostMatMul(const NodeView& v);
NodeCost CostEmbedding(const NodeView& v);
NodeCost CostLstm(const NodeView& v);
NodeCost CostUnary(const NodeView& v);
NodeCost CostBinary(const NodeView& v);
NodeCost CostWhere(const NodeView& v);
NodeCost CostNormalization(const NodeView& v);
NodeCost CostPool(const NodeView& v);
NodeCost CostReduce(const NodeView& v);
NodeCost CostSoftmax(const NodeView& v);
NodeCost CostLayout(const NodeView& v);
NodeCost CostSoftmaxCrossEntropy(const NodeView& v);
NodeCost CostCtcLoss(const NodeView& v);

// Dispatch on the node's kind; 0 FLOPs and no keeps for a parameter derivation.
NodeCost CostNode(const graph::Graph& graph, graph::NodeId id, const GraphFacts& facts);
// The op's own cost and keeps, also for a parameter derivation: a derivation is charged to
// the nodes that read it (CostNode), but its backward still reads what the op keeps
// (costmodel/backward_reads.h), e.g. Sqrt's output in a weight normalisation v / |v|.
NodeCost CostOp(const graph::Graph& graph, graph::NodeId id, const GraphFacts& facts);

}  // namespace tessera::costmodel::estimate
