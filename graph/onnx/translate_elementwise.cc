// ONNX -> IR: element-wise ops, reductions and softmax.
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/onnx/op_params.h"
#include "tessera/graph/onnx/translate.h"

namespace tessera::graph::onnx_import {
namespace {

OpKind KindOf(const std::string& op_type) {
  static const auto* kinds = new absl::flat_hash_map<std::string, OpKind>{
      {"Relu", OpKind::kRelu},   {"Sigmoid", OpKind::kSigmoid}, {"Tanh", OpKind::kTanh},
      {"Erf", OpKind::kErf},     {"Sqrt", OpKind::kSqrt},       {"Exp", OpKind::kExp},
      {"Log", OpKind::kLog},     {"Neg", OpKind::kNeg},         {"Reciprocal", OpKind::kReciprocal},
      {"Abs", OpKind::kAbs},     {"Gelu", OpKind::kGelu},       {"Add", OpKind::kAdd},
      {"Sub", OpKind::kSub},     {"Mul", OpKind::kMul},         {"Div", OpKind::kDiv},
      {"Pow", OpKind::kPow},     {"ReduceMean", OpKind::kReduceMean},
      {"ReduceSum", OpKind::kReduceSum}, {"ReduceMax", OpKind::kReduceMax},
      {"Softmax", OpKind::kSoftmax}, {"LogSoftmax", OpKind::kLogSoftmax}};
  return kinds->at(op_type);
}

absl::Status Unary(NodeCtx& c) {
  if (c.num_inputs() != 1) return c.Error("needs one input");
  TS_ASSIGN_OR_RETURN(TensorId x, c.Tensor(0));
  return c.Emit(KindOf(c.op_type()), {x}, std::monostate{}, 1);
}

// Input i as a tensor of `dtype`: a constant of another dtype (a Pow exponent
// of 2 as i64, say) is converted; a computed tensor must already match.
absl::StatusOr<TensorId> TensorAs(NodeCtx& c, int i, DType dtype) {
  const ConstTensor* k = c.Const(i);
  if (k == nullptr || k->dtype == dtype) return c.Tensor(i);
  Importer& im = c.importer();
  ConstTensor cast = CastConst(*k, dtype);
  graph::Tensor t{.name = im.UniqueTensorName(absl::StrCat(c.proto().input(i), "/as_",
                                                           DTypeName(dtype))),
                  .shape = cast.shape, .dtype = dtype, .role = TensorRole::kConstant};
  if (cast.size() <= kMaxDataElements) t.data = cast.AsDoubles();
  return im.graph().AddTensor(std::move(t));
}

absl::Status Binary(NodeCtx& c) {
  if (c.num_inputs() != 2 || !c.has_input(0) || !c.has_input(1)) {
    return c.Error("needs two inputs");
  }
  // A constant operand takes the dtype of the computed one.
  const bool a_const = c.Const(0) != nullptr;
  const DType dtype = a_const ? c.dtype(1) : c.dtype(0);
  TS_ASSIGN_OR_RETURN(TensorId a, TensorAs(c, 0, dtype));
  TS_ASSIGN_OR_RETURN(TensorId b, TensorAs(c, 1, dtype));
  return c.Emit(KindOf(c.op_type()), {a, b}, std::monostate{}, 1);
}

absl::Status Where(NodeCtx& c) {
  if (c.num_inputs() != 3) return c.Error("needs inputs condition, X and Y");
  if (!c.has_input(0) || !c.has_input(1) || !c.has_input(2)) return c.Error("needs 3 inputs");
  TS_ASSIGN_OR_RETURN(TensorId cond, TensorAs(c, 0, DType::kBool));
  const DType dtype = c.Const(1) != nullptr ? c.dtype(2) : c.dtype(1);
  TS_ASSIGN_OR_RETURN(TensorId x, TensorAs(c, 1, dtype));
  TS_ASSIGN_OR_RETURN(TensorId y, TensorAs(c, 2, dtype));
  return c.Emit(OpKind::kWhere, {cond, x, y}, std::monostate{}, 1);
}

absl::Status LeakyRelu(NodeCtx& c) {
  if (c.num_inputs() != 1) return c.Error("needs one input");
  TS_ASSIGN_OR_RETURN(TensorId x, c.Tensor(0));
  TS_ASSIGN_OR_RETURN(double alpha, c.attrs().Float("alpha", 0.01));
  return c.Emit(OpKind::kLeakyRelu, {x}, ScalarAttrs{.alpha = alpha}, 1);
}

// Clip -> ScalarAttrs{alpha = min, beta = max}; an absent bound is -inf / +inf.
absl::Status Clip(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(TensorId x, c.Tensor(0));
  constexpr double kInf = std::numeric_limits<double>::infinity();
  ScalarAttrs a{.alpha = -kInf, .beta = kInf};
  if (c.opset() >= 11) {
    if (c.has_input(1)) {
      TS_ASSIGN_OR_RETURN(a.alpha, c.ConstScalar(1, "min"));
    }
    if (c.has_input(2)) {
      TS_ASSIGN_OR_RETURN(a.beta, c.ConstScalar(2, "max"));
    }
  } else {
    TS_ASSIGN_OR_RETURN(a.alpha, c.attrs().Float("min", -kInf));
    TS_ASSIGN_OR_RETURN(a.beta, c.attrs().Float("max", kInf));
  }
  return c.Emit(OpKind::kClip, {x}, a, 1);
}

// Dropout -> ScalarAttrs{alpha = ratio}; the mask output is not produced.
absl::Status Dropout(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(TensorId x, c.Tensor(0));
  double ratio = 0.5;
  if (c.opset() >= 12) {
    if (c.has_input(1)) {
      TS_ASSIGN_OR_RETURN(ratio, c.ConstScalar(1, "ratio"));
    }
  } else {
    TS_ASSIGN_OR_RETURN(ratio, c.attrs().Float("ratio", 0.5));
  }
  return c.Emit(OpKind::kDropout, {x}, ScalarAttrs{.alpha = ratio}, 1);
}

absl::Status Cast(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(TensorId x, c.Tensor(0));
  if (!c.attrs().Has("to")) return c.attrs().Error("to", "is required");
  TS_ASSIGN_OR_RETURN(int64_t to, c.attrs().Int("to", 1));
  auto dtype = DTypeFromOnnx(static_cast<int>(to));
  if (!dtype.ok()) return c.Error(dtype.status().message());
  return c.Emit(OpKind::kCast, {x}, CastAttrs{*dtype}, 1);
}

absl::Status Reduce(NodeCtx& c) {
  TS_ASSIGN_OR_RETURN(TensorId x, c.Tensor(0));
  bool noop = false;
  TS_ASSIGN_OR_RETURN(AxesAttrs a, ReadReduce(c, &noop));
  if (noop) return c.Emit(OpKind::kIdentity, {x}, std::monostate{}, 1);
  return c.Emit(KindOf(c.op_type()), {x}, std::move(a), 1);
}

// Softmax/LogSoftmax. Before opset 13 the input is coerced to 2-D at `axis`
// (default 1) and normalized over everything from `axis` on: that equals a
// last-axis softmax when axis is the last axis, and otherwise is imported as
// Flatten(axis) -> Softmax(axis 1) -> Reshape(back).
absl::Status Softmax(NodeCtx& c) {
  if (c.num_inputs() != 1) return c.Error("needs one input");
  TS_ASSIGN_OR_RETURN(TensorId x, c.Tensor(0));
  const OpKind kind = KindOf(c.op_type());
  const int64_t rank = static_cast<int64_t>(c.shape(0).size());
  TS_ASSIGN_OR_RETURN(int64_t axis, c.attrs().Int("axis", c.opset() >= 13 ? -1 : 1));
  const auto normalized = NormalizeAxis(axis, rank);
  if (!normalized) return c.Error(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  if (c.opset() >= 13 || *normalized == rank - 1) {
    return c.Emit(kind, {x}, AxisAttrs{*normalized}, 1);
  }
  const Shape original = c.shape(0);
  TS_ASSIGN_OR_RETURN(TensorId flat, c.EmitTemp(OpKind::kFlatten, {x}, AxisAttrs{*normalized},
                                                "flatten"));
  TS_ASSIGN_OR_RETURN(TensorId soft, c.EmitTemp(kind, {flat}, AxisAttrs{1}, "softmax_2d"));
  return c.EmitOutput(OpKind::kReshape, {soft}, ReshapeAttrs{original}, 0, "reshape");
}

}  // namespace

std::vector<Translation> ElementwiseTranslations() {
  std::vector<Translation> t = {{"LeakyRelu", LeakyRelu}, {"Clip", Clip},
                                {"Dropout", Dropout},     {"Cast", Cast},
                                {"Where", Where},         {"Softmax", Softmax},
                                {"LogSoftmax", Softmax}};
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Sqrt", "Exp", "Log", "Neg",
                         "Reciprocal", "Abs"}) {
    t.push_back({op, Unary});
  }
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow"}) t.push_back({op, Binary});
  for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax"}) t.push_back({op, Reduce});
  return t;
}

}  // namespace tessera::graph::onnx_import
