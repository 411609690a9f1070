// GraphBuilder layers: convolutions, batch normalization, pooling.
#include <utility>

#include "absl/strings/str_cat.h"
#include "tessera/graph/builder.h"

namespace tessera::graph {

Value GraphBuilder::Conv2d(Value x, int64_t out_channels, Size2 kernel, absl::string_view name,
                           Conv2dOptions o) {
  if (!CheckInputs(Describe("Conv2d", name), {x})) return Value();
  const std::string full = LayerName(name, "conv");
  if (full.empty()) return Value();
  if (x.rank() != 4) {
    LayerError("Conv2d", full, {x}, "expects a 4-D input [N, C, H, W]");
    return Value();
  }
  if (out_channels < 1 || kernel.h < 1 || kernel.w < 1 || o.groups < 1 ||
      x.dim(1) % o.groups != 0) {
    LayerError("Conv2d", full, {x},
               absl::StrCat("needs out_channels >= 1 (got ", out_channels, "), kernel >= 1 (got ",
                            kernel.h, "x", kernel.w, ") and groups >= 1 dividing the ", x.dim(1),
                            " input channels (got ", o.groups, ")"));
    return Value();
  }
  Value w = NewTensor(SubName(full, "weight"),
                      {out_channels, x.dim(1) / o.groups, kernel.h, kernel.w}, x.dtype(),
                      TensorRole::kParameter);
  std::vector<TensorId> inputs = {x.id(), w.id()};
  if (o.bias) {
    Value b = NewTensor(SubName(full, "bias"), {out_channels}, x.dtype(), TensorRole::kParameter);
    inputs.push_back(b.id());
  }
  ConvAttrs attrs{.kernel_shape = {kernel.h, kernel.w},
                  .strides = {o.stride.h, o.stride.w},
                  .pads = {o.padding.h, o.padding.w, o.padding.h, o.padding.w},
                  .dilations = {o.dilation.h, o.dilation.w},
                  .groups = o.groups};
  return EmitOne(OpKind::kConv, std::move(inputs), std::move(attrs), full);
}

Value GraphBuilder::Conv1d(Value x, int64_t out_channels, int64_t kernel, absl::string_view name,
                           Conv1dOptions o) {
  if (!CheckInputs(Describe("Conv1d", name), {x})) return Value();
  const std::string full = LayerName(name, "conv");
  if (full.empty()) return Value();
  if (x.rank() != 3) {
    LayerError("Conv1d", full, {x}, "expects a 3-D input [N, C, L]");
    return Value();
  }
  if (out_channels < 1 || kernel < 1 || o.groups < 1 || x.dim(1) % o.groups != 0) {
    LayerError("Conv1d", full, {x},
               absl::StrCat("needs out_channels >= 1 (got ", out_channels, "), kernel >= 1 (got ",
                            kernel, ") and groups >= 1 dividing the ", x.dim(1),
                            " input channels (got ", o.groups, ")"));
    return Value();
  }
  Value w = NewTensor(SubName(full, "weight"), {out_channels, x.dim(1) / o.groups, kernel},
                      x.dtype(), TensorRole::kParameter);
  std::vector<TensorId> inputs = {x.id(), w.id()};
  if (o.bias) {
    Value b = NewTensor(SubName(full, "bias"), {out_channels}, x.dtype(), TensorRole::kParameter);
    inputs.push_back(b.id());
  }
  ConvAttrs attrs{.kernel_shape = {kernel},
                  .strides = {o.stride},
                  .pads = {o.padding, o.padding},
                  .dilations = {o.dilation},
                  .groups = o.groups};
  return EmitOne(OpKind::kConv, std::move(inputs), std::move(attrs), full);
}

Value GraphBuilder::BatchNorm2d(Value x, absl::string_view name, BatchNormOptions o) {
  if (!CheckInputs(Describe("BatchNorm2d", name), {x})) return Value();
  const std::string full = LayerName(name, "bn");
  if (full.empty()) return Value();
  if (x.rank() != 4) {
    LayerError("BatchNorm2d", full, {x}, "expects a 4-D input [N, C, H, W]");
    return Value();
  }
  const int64_t c = x.dim(1);
  const DType dt = x.dtype();
  // Trainable scale and shift; running statistics are state, not parameters.
  Value scale = NewTensor(SubName(full, "weight"), {c}, dt, TensorRole::kParameter);
  Value shift = NewTensor(SubName(full, "bias"), {c}, dt, TensorRole::kParameter);
  Value mean = NewTensor(SubName(full, "running_mean"), {c}, dt, TensorRole::kConstant,
                         std::vector<double>(c, 0.0));
  Value var = NewTensor(SubName(full, "running_var"), {c}, dt, TensorRole::kConstant,
                        std::vector<double>(c, 1.0));
  return EmitOne(OpKind::kBatchNorm, {x.id(), scale.id(), shift.id(), mean.id(), var.id()},
                 BatchNormAttrs{.epsilon = o.eps, .momentum = 1.0 - o.momentum}, full);
}

Value GraphBuilder::Pool2d(OpKind kind, Value x, Size2 kernel, absl::string_view name,
                           const Pool2dOptions& o) {
  const char* layer = kind == OpKind::kMaxPool ? "MaxPool2d" : "AvgPool2d";
  if (!CheckInputs(Describe(layer, name), {x})) return Value();
  const std::string full = LayerName(name, kind == OpKind::kMaxPool ? "maxpool" : "avgpool");
  if (full.empty()) return Value();
  if (x.rank() != 4) {
    LayerError(layer, full, {x}, "expects a 4-D input [N, C, H, W]");
    return Value();
  }
  const Size2 stride(o.stride.h == 0 ? kernel.h : o.stride.h,
                     o.stride.w == 0 ? kernel.w : o.stride.w);
  PoolAttrs attrs{.kernel_shape = {kernel.h, kernel.w},
                  .strides = {stride.h, stride.w},
                  .pads = {o.padding.h, o.padding.w, o.padding.h, o.padding.w},
                  .ceil_mode = o.ceil_mode,
                  .count_include_pad = kind == OpKind::kAveragePool && o.count_include_pad};
  return EmitOne(kind, {x.id()}, std::move(attrs), full);
}

Value GraphBuilder::MaxPool2d(Value x, Size2 kernel, absl::string_view name, Pool2dOptions o) {
  return Pool2d(OpKind::kMaxPool, x, kernel, name, o);
}

Value GraphBuilder::AvgPool2d(Value x, Size2 kernel, absl::string_view name, Pool2dOptions o) {
  return Pool2d(OpKind::kAveragePool, x, kernel, name, o);
}

Value GraphBuilder::GlobalAvgPool(Value x, absl::string_view name) {
  return Simple(OpKind::kGlobalAveragePool, {x}, std::monostate{}, name, "global_avgpool");
}

}  // namespace tessera::graph
