// Internal to shape inference: what an op's inference function sees.
#pragma once

#include <string>
#include "absl/strings/string_view.h"
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tessera/graph/graph.h"
#include "tessera/graph/shape_inference.h"

namespace tessera::graph::infer {

class InferContext {
 public:
  InferContext(const Graph& graph, const Node& node) : graph_(graph), node_(node) {}

  const Node& node() const { return node_; }
  int num_inputs() const { return static_cast<int>(node_.inputs.size()); }
  bool has_input(int i) const { return i < num_inputs() && node_.inputs[i] != kNoTensor; }
  const Tensor& input(int i) const { return graph_.tensor(node_.inputs[i]); }
  const Shape& shape(int i) const { return input(i).shape; }
  int64_t rank(int i) const { return static_cast<int64_t>(shape(i).size()); }
  DType dtype(int i) const { return input(i).dtype; }
  template <typename T>
  const T& attrs() const {
    return std::get<T>(node_.attrs);
  }

  // InvalidArgument: "node 'x' (Op) with inputs <shapes>: <expected>".
  absl::Status Error(absl::string_view expected) const;

 private:
  const Graph& graph_;
  const Node& node_;
};

using Result = absl::StatusOr<std::vector<TensorType>>;

inline Result One(Shape shape, DType dtype) {
  return std::vector<TensorType>{TensorType{std::move(shape), dtype}};
}

// Output spatial size of a window op (conv, pooling) along one axis; < 1 means
// the window does not fit.
int64_t WindowOutput(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin,
                     int64_t pad_end, int64_t dilation, bool ceil_mode);

Result InferConv(const InferContext& c);
Result InferGemm(const InferContext& c);
Result InferMatMul(const InferContext& c);
Result InferEmbedding(const InferContext& c);
Result InferLstm(const InferContext& c);
Result InferBatchNorm(const InferContext& c);
Result InferLayerNorm(const InferContext& c);
Result InferPool(const InferContext& c);
Result InferGlobalPool(const InferContext& c);
Result InferUnary(const InferContext& c);
Result InferCast(const InferContext& c);
Result InferBinary(const InferContext& c);
Result InferWhere(const InferContext& c);
Result InferReduce(const InferContext& c);
Result InferSoftmax(const InferContext& c);
Result InferReshape(const InferContext& c);
Result InferTranspose(const InferContext& c);
Result InferFlatten(const InferContext& c);
Result InferConcat(const InferContext& c);
Result InferSplit(const InferContext& c);
Result InferSlice(const InferContext& c);
Result InferSqueeze(const InferContext& c);
Result InferUnsqueeze(const InferContext& c);
Result InferGather(const InferContext& c);
Result InferExpand(const InferContext& c);
Result InferPad(const InferContext& c);
Result InferSoftmaxCrossEntropy(const InferContext& c);
Result InferCtcLoss(const InferContext& c);

}  // namespace tessera::graph::infer
