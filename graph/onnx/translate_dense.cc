// ONNX -> IR: convolution, matrix products, LSTM, normalization, pooling.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tessera/base/status_macros.h"
#include "tessera/graph/onnx/translate.h"

namespace tessera::graph::onnx_import {
namespace {

std::vector<int64_t> Fill(size_t n, int64_t v) { return std::vector<int64_t>(n, v); }

// Explicit pads (all begins, then all ends) from `pads` or `auto_pad`.
absl::StatusOr<std::vector<int64_t>> ResolvePads(const NodeCtx& c, const Shape& x,
                                                 const std::vector<int64_t>& kernel,
                                                 const std::vector<int64_t>& strides,
                                                 const std::vector<int64_t>& dilations) {
  const size_t spatial = kernel.size();
  TS_ASSIGN_OR_RETURN(std::string auto_pad, c.attrs().String("auto_pad", "NOTSET"));
  if (auto_pad == "NOTSET") {
    TS_ASSIGN_OR_RETURN(std::vector<int64_t> pads, c.attrs().Ints("pads", Fill(2 * spatial, 0)));
    if (pads.size() != 2 * spatial) {
      return c.attrs().Error("pads", absl::StrCat("has ", pads.size(), " values; expected ",
                                                  2 * spatial));
    }
    return pads;
  }
  if (auto_pad == "VALID") return Fill(2 * spatial, 0);
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    return c.attrs().Error("auto_pad", absl::StrCat("is '", auto_pad,
                                                    "'; expected NOTSET, VALID, SAME_UPPER or "
                                                    "SAME_LOWER"));
  }
  std::vector<int64_t> pads = Fill(2 * spatial, 0);
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t in = x[2 + i];
    if (strides[i] < 1 || dilations[i] < 1 || kernel[i] < 1) {
      return c.Error("kernel_shape, strides and dilations must be >= 1");
    }
    const int64_t out = (in + strides[i] - 1) / strides[i];
    const int64_t span = (kernel[i] - 1) * dilations[i] + 1;
    const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + span - in);
    const int64_t small = total / 2;
    pads[i] = auto_pad == "SAME_UPPER" ? small : total - small;
    pads[spatial + i] = total - pads[i];
  }
  return pads;
}

absl::Status CheckSpatial(const NodeCtx& c, const Shape& x) {
  if (x.size() < 3) {
    return c.Error(absl::StrCat("X is ", ShapeString(x), "; expected [N, C, spatial...]"));
  }
  return absl::OkStatus();
}

absl::Status Conv(NodeCtx& c) {
  if (c.num_inputs() < 2) return c.Error("needs inputs X and W");
  TS_ASSIGN_OR_RETURN(TensorId x, c.Tensor(0));
  TS_ASSIGN_OR_RETURN(TensorId w, c.Tensor(1));
  TS_ASSIGN_OR_RETURN(TensorId b, c.OptionalTensor(2));
  const Shape& xs = c.shape(0);
  const Shape& ws = c.shape(1);
  TS_RETURN_IF_ERROR(CheckSpatial(c, xs));
  if (ws.size() != xs.size()) {
    return c.Error(absl::StrCat("W is ", ShapeString(ws), "; expected rank ", xs.size()));
  }
  const size_t spatial = xs.size() - 2;
  ConvAttrs a;
  TS_ASSIGN_OR_RETURN(a.kernel_shape,
                      c.attrs().Ints("kernel_shape", std::vector<int64_t>(ws.begin() + 2, ws.end())));
  TS_ASSIGN_OR_RETURN(a.strides, c.attrs().Ints("strides", Fill(spatial, 1)));
  TS_ASSIGN_OR_RETURN(a.dilations, c.attrs().Ints("dilations", Fill(spatial, 1)));
  TS_ASSIGN_OR_RETURN(a.groups, c.attrs().Int("group", 1));
  if (a.kernel_shape.size() != spatial || a.strides.size() != spatial ||
      a.dilations.size() != spatial) {
    return c.Error(absl::StrCat("kernel_shape, strides and dilations need ", spatial, " values"));
  }
  TS_ASSIGN_OR_RETURN(a.pads, ResolvePads(c, xs, a.kernel_shape, a.strides, a.dilations));
  std::vector<TensorId> inputs = {x, w};
  if (b != kNoTensor) inputs.push_back(b);
  return c.Emit(OpKind::kConv, std::move(inputs), std::move(a));
}

absl::Status Gemm(NodeCtx& c) {
  if (c.num_inputs() < 2) return c.Error("needs inputs A and B");
  TS_ASSIGN_OR_RETURN(TensorId a_t, c.Tensor(0));
  TS_ASSIGN_OR_RETURN(TensorId b_t, c.Tensor(1));
  TS_ASSIGN_OR_RETURN(TensorId c_t, c.OptionalTensor(2));
  GemmAttrs a;
  TS_ASSIGN_OR_RETURN(int64_t trans_a, c.attrs().Int("transA", 0));
  TS_ASSIGN_OR_RETURN(int64_t trans_b, c.attrs().Int("transB", 0));
  TS_ASSIGN_OR_RETURN(a.alpha, c.attrs().Float("alpha", 1.0));
  TS_ASSIGN_OR_RETURN(a.beta, c.attrs().Float("beta", 1.0));
  a.trans_a = trans_a != 0;
  a.trans_b = trans_b != 0;
  std::vector<TensorId> inputs = {a_t, b_t};
  if (c_t != kNoTensor) inputs.push_back(c_t);
  return c.Emit(OpKind::kGemm, std::move(inputs), a);
}

absl::Status MatMul(NodeCtx& c) {
  if (c.num_inputs() != 2) return c.Error("needs inputs A and B");
  TS_ASSIGN_OR_RETURN(TensorId a, c.Tensor(0));
  TS_ASSIGN_OR_RETURN(TensorId b, c.Tensor(1));
  return c.Emit(OpKind::kMatMul, {a, b}, std::monostate{});
}

absl::Status CheckLstmActivations(const NodeCtx& c, int dirs) {
  const onnx::AttributeProto* acts = c.attrs().Find("activations");
  if (acts != nullptr) {
    std::vector<std::string> got(acts->strings().begin(), acts->strings().end());
    std::vector<std::string> expected;
    for (int d = 0; d < dirs; ++d) expected.insert(expected.end(), {"Sigmoid", "Tanh", "Tanh"});
    if (got != expected) {
      return c.attrs().Error("activations", absl::StrCat("is [", absl::StrJoin(got, ","),
                                                         "]; only the default [",
                                                         absl::StrJoin(expected, ","),
                                                         "] is supported"));
    }
  }
  if (c.attrs().Has("clip")) return c.attrs().Error("clip", "(cell clipping) is not supported");
  TS_ASSIGN_OR_RETURN(int64_t input_forget, c.attrs().Int("input_forget", 0));
  if (input_forget != 0) return c.attrs().Error("input_forget", "must be 0");
  if (c.has_input(7)) return c.Error("peephole weights P (input 7) are not supported");
  return absl::OkStatus();
}

absl::Status Lstm(NodeCtx& c) {
  if (c.num_inputs() < 3) return c.Error("needs inputs X, W and R");
  LstmAttrs a;
  TS_ASSIGN_OR_RETURN(std::string direction, c.attrs().String("direction", "forward"));
  if (direction == "forward") {
    a.direction = LstmDirection::kForward;
  } else if (direction == "reverse") {
    a.direction = LstmDirection::kReverse;
  } else if (direction == "bidirectional") {
    a.direction = LstmDirection::kBidirectional;
  } else {
    return c.attrs().Error("direction", absl::StrCat("is '", direction, "'"));
  }
  std::vector<TensorId> inputs;
  for (int i = 0; i < std::min(c.num_inputs(), 7); ++i) {
    TS_ASSIGN_OR_RETURN(TensorId t, i < 3 ? c.Tensor(i) : c.OptionalTensor(i));
    inputs.push_back(t);
  }
  const Shape& r = c.shape(2);
  TS_ASSIGN_OR_RETURN(a.hidden_size, c.attrs().Int("hidden_size", r.size() == 3 ? r[2] : 0));
  TS_ASSIGN_OR_RETURN(a.layout, c.attrs().Int("layout", 0));
  TS_RETURN_IF_ERROR(CheckLstmActivations(c, direction == "bidirectional" ? 2 : 1));
  while (inputs.size() > 3 && inputs.back() == kNoTensor) inputs.pop_back();
  return c.Emit(OpKind::kLstm, std::move(inputs), a, 3);
}

absl::Status BatchNorm(NodeCtx& c) {
  if (c.num_inputs() != 5) return c.Error("needs inputs X, scale, B, mean and var");
  std::vector<TensorId> inputs;
  for (int i = 0; i < 5; ++i) {
    TS_ASSIGN_OR_RETURN(TensorId t, c.Tensor(i));
    inputs.push_back(t);
  }
  BatchNormAttrs a;
  TS_ASSIGN_OR_RETURN(a.epsilon, c.attrs().Float("epsilon", 1e-5));
  TS_ASSIGN_OR_RETURN(a.momentum, c.attrs().Float("momentum", 0.9));
  // training_mode 1 (a training export, opset 14+; before 14, the running statistics as
  // outputs 1 and 2): Tessera's BatchNormalization already normalizes with the batch
  // statistics while training and the running ones otherwise; only output 0 is imported.
  TS_ASSIGN_OR_RETURN(int64_t training, c.attrs().Int("training_mode", 0));
  if (training != 0 && training != 1) {
    return c.attrs().Error("training_mode", absl::StrCat("is ", training, "; expected 0 or 1"));
  }
  return c.Emit(OpKind::kBatchNorm, std::move(inputs), a, 1);
}

absl::Status LayerNorm(NodeCtx& c) {
  if (c.num_inputs() < 2) return c.Error("needs inputs X and Scale");
  TS_ASSIGN_OR_RETURN(TensorId x, c.Tensor(0));
  TS_ASSIGN_OR_RETURN(TensorId scale, c.Tensor(1));
  TS_ASSIGN_OR_RETURN(TensorId bias, c.OptionalTensor(2));
  LayerNormAttrs a;
  TS_ASSIGN_OR_RETURN(a.axis, c.attrs().Int("axis", -1));
  TS_ASSIGN_OR_RETURN(a.epsilon, c.attrs().Float("epsilon", 1e-5));
  std::vector<TensorId> inputs = {x, scale};
  if (bias != kNoTensor) inputs.push_back(bias);
  return c.Emit(OpKind::kLayerNorm, std::move(inputs), a, 1);
}

absl::Status Pool(NodeCtx& c) {
  if (c.num_inputs() != 1) return c.Error("needs one input");
  TS_ASSIGN_OR_RETURN(TensorId x, c.Tensor(0));
  const Shape& xs = c.shape(0);
  TS_RETURN_IF_ERROR(CheckSpatial(c, xs));
  const size_t spatial = xs.size() - 2;
  PoolAttrs a;
  TS_ASSIGN_OR_RETURN(a.kernel_shape, c.attrs().Ints("kernel_shape", {}));
  if (a.kernel_shape.size() != spatial) {
    return c.attrs().Error("kernel_shape", absl::StrCat("needs ", spatial, " values"));
  }
  TS_ASSIGN_OR_RETURN(a.strides, c.attrs().Ints("strides", Fill(spatial, 1)));
  TS_ASSIGN_OR_RETURN(std::vector<int64_t> dilations,
                      c.attrs().Ints("dilations", Fill(spatial, 1)));
  if (a.strides.size() != spatial || dilations != Fill(spatial, 1)) {
    return c.Error(absl::StrCat("strides need ", spatial, " values and dilations must be 1"));
  }
  TS_ASSIGN_OR_RETURN(a.pads, ResolvePads(c, xs, a.kernel_shape, a.strides, dilations));
  TS_ASSIGN_OR_RETURN(int64_t ceil_mode, c.attrs().Int("ceil_mode", 0));
  TS_ASSIGN_OR_RETURN(int64_t include_pad, c.attrs().Int("count_include_pad", 0));
  a.ceil_mode = ceil_mode != 0;
  a.count_include_pad = include_pad != 0;
  if (c.has_output(1)) return c.Error("the Indices output is not supported");
  const OpKind kind = c.op_type() == "MaxPool" ? OpKind::kMaxPool : OpKind::kAveragePool;
  return c.Emit(kind, {x}, std::move(a), 1);
}

absl::Status GlobalAveragePool(NodeCtx& c) {
  if (c.num_inputs() != 1) return c.Error("needs one input");
  TS_ASSIGN_OR_RETURN(TensorId x, c.Tensor(0));
  TS_RETURN_IF_ERROR(CheckSpatial(c, c.shape(0)));
  return c.Emit(OpKind::kGlobalAveragePool, {x}, std::monostate{});
}

}  // namespace

std::vector<Translation> DenseTranslations() {
  return {{"Conv", Conv},
          {"Gemm", Gemm},
          {"MatMul", MatMul},
          {"LSTM", Lstm},
          {"BatchNormalization", BatchNorm},
          {"LayerNormalization", LayerNorm},
          {"MaxPool", Pool},
          {"AveragePool", Pool},
          {"GlobalAveragePool", GlobalAveragePool}};
}

}  // namespace tessera::graph::onnx_import
