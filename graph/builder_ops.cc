// GraphBuilder: single ops (element-wise, reductions, softmax, layout, losses).
#include <utility>

#include "absl/strings/str_cat.h"
#include "tessera/graph/builder.h"

namespace tessera::graph {

// ---------------------------------------------------------------- element-wise

Value GraphBuilder::Unary(OpKind kind, Value x, absl::string_view name) {
  std::vector<Value> outs = AddOp(kind, {x}, DefaultAttrs(kind), name, 1);
  return outs.empty() ? Value() : outs[0];
}

Value GraphBuilder::Add(Value a, Value b, absl::string_view name) {
  return Simple(OpKind::kAdd, {a, b}, std::monostate{}, name, "add");
}
Value GraphBuilder::Sub(Value a, Value b, absl::string_view name) {
  return Simple(OpKind::kSub, {a, b}, std::monostate{}, name, "sub");
}
Value GraphBuilder::Mul(Value a, Value b, absl::string_view name) {
  return Simple(OpKind::kMul, {a, b}, std::monostate{}, name, "mul");
}
Value GraphBuilder::Div(Value a, Value b, absl::string_view name) {
  return Simple(OpKind::kDiv, {a, b}, std::monostate{}, name, "div");
}
Value GraphBuilder::Pow(Value a, Value b, absl::string_view name) {
  return Simple(OpKind::kPow, {a, b}, std::monostate{}, name, "pow");
}
Value GraphBuilder::Where(Value cond, Value x, Value y, absl::string_view name) {
  return Simple(OpKind::kWhere, {cond, x, y}, std::monostate{}, name, "where");
}
Value GraphBuilder::Relu(Value x, absl::string_view name) {
  return Simple(OpKind::kRelu, {x}, std::monostate{}, name, "relu");
}
Value GraphBuilder::LeakyRelu(Value x, double alpha, absl::string_view name) {
  return Simple(OpKind::kLeakyRelu, {x}, ScalarAttrs{.alpha = alpha}, name, "leaky_relu");
}
Value GraphBuilder::Clip(Value x, double min, double max, absl::string_view name) {
  return Simple(OpKind::kClip, {x}, ScalarAttrs{.alpha = min, .beta = max}, name, "clip");
}

Value GraphBuilder::Dropout(Value x, double p, absl::string_view name) {
  if (!CheckInputs(Describe("Dropout", name), {x})) return Value();
  if (p < 0.0 || p >= 1.0) {
    Fail(absl::InvalidArgumentError(absl::StrCat(Describe("Dropout", name), " on '", x.name(),
                                                 "': p=", p, " must be in [0, 1)")));
    return Value();
  }
  if (p == 0.0) return x;
  return Simple(OpKind::kDropout, {x}, ScalarAttrs{.alpha = p}, name, "dropout");
}

Value GraphBuilder::Cast(Value x, DType to, absl::string_view name) {
  return Simple(OpKind::kCast, {x}, CastAttrs{.to = to}, name, "cast");
}

Value GraphBuilder::MatMul(Value a, Value b, absl::string_view name) {
  return Simple(OpKind::kMatMul, {a, b}, std::monostate{}, name, "matmul");
}

// ---------------------------------------------------------------- reductions, softmax

Value GraphBuilder::ReduceMean(Value x, std::vector<int64_t> axes, bool keepdims,
                               absl::string_view name) {
  return Simple(OpKind::kReduceMean, {x}, AxesAttrs{.axes = std::move(axes), .keepdims = keepdims},
                name, "reduce_mean");
}
Value GraphBuilder::ReduceSum(Value x, std::vector<int64_t> axes, bool keepdims,
                              absl::string_view name) {
  return Simple(OpKind::kReduceSum, {x}, AxesAttrs{.axes = std::move(axes), .keepdims = keepdims},
                name, "reduce_sum");
}
Value GraphBuilder::ReduceMax(Value x, std::vector<int64_t> axes, bool keepdims,
                              absl::string_view name) {
  return Simple(OpKind::kReduceMax, {x}, AxesAttrs{.axes = std::move(axes), .keepdims = keepdims},
                name, "reduce_max");
}
Value GraphBuilder::Softmax(Value x, int64_t axis, absl::string_view name) {
  return Simple(OpKind::kSoftmax, {x}, AxisAttrs{.axis = axis}, name, "softmax");
}
Value GraphBuilder::LogSoftmax(Value x, int64_t axis, absl::string_view name) {
  return Simple(OpKind::kLogSoftmax, {x}, AxisAttrs{.axis = axis}, name, "log_softmax");
}

// ---------------------------------------------------------------- layout

Value GraphBuilder::Reshape(Value x, Shape shape, absl::string_view name) {
  return Simple(OpKind::kReshape, {x}, ReshapeAttrs{.shape = std::move(shape)}, name, "reshape");
}
Value GraphBuilder::Transpose(Value x, std::vector<int64_t> perm, absl::string_view name) {
  return Simple(OpKind::kTranspose, {x}, PermAttrs{.perm = std::move(perm)}, name, "transpose");
}
Value GraphBuilder::Flatten(Value x, int64_t axis, absl::string_view name) {
  return Simple(OpKind::kFlatten, {x}, AxisAttrs{.axis = axis}, name, "flatten");
}
Value GraphBuilder::Squeeze(Value x, std::vector<int64_t> axes, absl::string_view name) {
  return Simple(OpKind::kSqueeze, {x}, AxesAttrs{.axes = std::move(axes)}, name, "squeeze");
}
Value GraphBuilder::Unsqueeze(Value x, std::vector<int64_t> axes, absl::string_view name) {
  return Simple(OpKind::kUnsqueeze, {x}, AxesAttrs{.axes = std::move(axes)}, name, "unsqueeze");
}
Value GraphBuilder::Gather(Value data, Value indices, int64_t axis, absl::string_view name) {
  return Simple(OpKind::kGather, {data, indices}, AxisAttrs{.axis = axis}, name, "gather");
}
Value GraphBuilder::Expand(Value x, Shape shape, absl::string_view name) {
  return Simple(OpKind::kExpand, {x}, ExpandAttrs{.shape = std::move(shape)}, name, "expand");
}
Value GraphBuilder::Pad(Value x, std::vector<int64_t> pads, PadMode mode, double value,
                        absl::string_view name) {
  return Simple(OpKind::kPad, {x}, PadAttrs{.pads = std::move(pads), .mode = mode, .value = value},
                name, "pad");
}

Value GraphBuilder::Slice(Value x, std::vector<int64_t> starts, std::vector<int64_t> ends,
                          std::vector<int64_t> axes, std::vector<int64_t> steps,
                          absl::string_view name) {
  return Simple(OpKind::kSlice, {x},
                SliceAttrs{.starts = std::move(starts), .ends = std::move(ends),
                           .axes = std::move(axes), .steps = std::move(steps)},
                name, "slice");
}

Value GraphBuilder::Concat(absl::Span<const Value> xs, int64_t axis, absl::string_view name) {
  std::vector<Value> outs = AddOp(OpKind::kConcat, xs, AxisAttrs{.axis = axis}, name, 1);
  return outs.empty() ? Value() : outs[0];
}

std::vector<Value> GraphBuilder::Split(Value x, std::vector<int64_t> sizes, int64_t axis,
                                       absl::string_view name) {
  const int n = static_cast<int>(sizes.size());
  return AddOp(OpKind::kSplit, {x}, SplitAttrs{.axis = axis, .sizes = std::move(sizes)}, name,
               n);
}

// ---------------------------------------------------------------- losses

Value GraphBuilder::SoftmaxCrossEntropy(Value logits, Value labels, absl::string_view name,
                                        Reduction reduction, int64_t ignore_index) {
  return Simple(OpKind::kSoftmaxCrossEntropy, {logits, labels},
                LossAttrs{.reduction = reduction, .ignore_index = ignore_index}, name,
                "cross_entropy");
}

Value GraphBuilder::CtcLoss(Value log_probs, Value targets, Value input_lengths,
                            Value target_lengths, absl::string_view name, CtcOptions options) {
  return Simple(OpKind::kCtcLoss, {log_probs, targets, input_lengths, target_lengths},
                LossAttrs{.reduction = options.reduction, .blank = options.blank}, name,
                "ctc_loss");
}

}  // namespace tessera::graph
