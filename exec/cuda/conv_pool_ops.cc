// CUDA ConvPool family: the registration of Conv (cuDNN, conv_ops.cc), BatchNormalization
// (custom kernels, batchnorm_ops.cc) and, here, the pooling ops MaxPool, AveragePool and
// GlobalAveragePool (custom kernels, conv_pool_kernels.cu).
//
// Pooling does not use cuDNN: cuDNN's pooling backward reads X and Y, which the runtime does not
// keep for a pool (docs/estimates.md: MaxPool keeps one int32 arg-max per output, AveragePool
// nothing), and it cannot express the CPU kernel's asymmetric pads, ceil_mode windows or
// divisor rule. The custom kernels follow the rules of exec/cpu/kernels_conv_pool.cc.
#include <climits>

#include "tessera/exec/cuda/conv_pool_launch.h"
#include "tessera/exec/cuda/ops_impl.h"

namespace tessera::exec::cuda {

void RegisterCudaConv(OpTable& table);       // conv_ops.cc
void RegisterCudaBatchNorm(OpTable& table);  // batchnorm_ops.cc

namespace {

using graph::OpKind;

std::vector<int64_t> OrFill(const std::vector<int64_t>& v, size_t n, int64_t fill) {
  return v.empty() ? std::vector<int64_t>(n, fill) : v;
}

// The window geometry of a MaxPool/AveragePool node from X's and Y's shapes.
absl::StatusOr<PoolGeometry> MakePoolGeometry(const graph::Node& node, const graph::Shape& x,
                                              const graph::Shape& y) {
  const auto& attrs = std::get<graph::PoolAttrs>(node.attrs);
  if (x.size() < 3 || y.size() != x.size() || x[0] != y[0] || x[1] != y[1]) {
    return NodeError(node, "X must be [N, C, spatial...] and Y [N, C, pooled...]");
  }
  const size_t s = x.size() - 2;
  if (s > static_cast<size_t>(kMaxRank)) {
    return NodeError(node, absl::StrCat(s, " spatial axes exceed the CUDA pooling kernels' ",
                                        kMaxRank, "; run the node on the CPU back-end"));
  }
  const std::vector<int64_t> strides = OrFill(attrs.strides, s, 1);
  const std::vector<int64_t> pads = OrFill(attrs.pads, 2 * s, 0);
  if (attrs.kernel_shape.size() != s || strides.size() != s || pads.size() != 2 * s) {
    return NodeError(node, absl::StrCat("kernel_shape and strides need ", s, " values and pads ",
                                        2 * s, " (run shape inference first)"));
  }
  PoolGeometry g;
  g.rank = static_cast<int>(s);
  g.planes = x[0] * x[1];
  for (size_t d = 0; d < s; ++d) {
    g.in[d] = x[2 + d];
    g.out[d] = y[2 + d];
    g.kernel[d] = attrs.kernel_shape[d];
    g.stride[d] = strides[d];
    g.pad_begin[d] = pads[d];
    g.pad_end[d] = pads[s + d];
    g.in_size *= g.in[d];
    g.out_size *= g.out[d];
  }
  return g;
}

// MaxPool keeps the arg-max of every output (int32 offsets in its (n, c) plane, -1 for an empty
// window) in state.buffers[0].
absl::Status MaxPoolForward(const FwdArgs& a) {
  TS_ASSIGN_OR_RETURN(const PoolGeometry g,
                      MakePoolGeometry(a.node, a.inputs[0].shape, a.outputs[0].shape));
  if (g.in_size > INT32_MAX) {
    return NodeError(a.node, absl::StrCat("a plane of ", g.in_size,
                                          " values is too large for the int32 arg-max; run "
                                          "the node on the CPU back-end"));
  }
  const int64_t outputs = g.planes * g.out_size;
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation arg, Scratch<int32_t>(a.node, a.ctx, outputs));
  TS_CUDA_RETURN_IF_ERROR(
      LaunchMaxPool(a.inputs[0].data, g, a.outputs[0].data, As<int32_t>(arg), a.ctx.stream));
  a.state.buffers.push_back(std::move(arg));
  return absl::OkStatus();
}

absl::Status MaxPoolBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  TS_RETURN_IF_ERROR(ZeroFill(dx, a.ctx.stream));
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return absl::OkStatus();
  if (a.state.buffers.empty()) return NodeError(a.node, "backward without a forward");
  TS_ASSIGN_OR_RETURN(const PoolGeometry g,
                      MakePoolGeometry(a.node, a.inputs[0].shape, a.outputs[0].shape));
  TS_CUDA_RETURN_IF_ERROR(LaunchMaxPoolBackward(
      As<const int32_t>(a.state.buffers[0]), dy, g, dx.data, a.ctx.stream));
  return absl::OkStatus();
}

absl::Status AveragePoolForward(const FwdArgs& a) {
  TS_ASSIGN_OR_RETURN(const PoolGeometry g,
                      MakePoolGeometry(a.node, a.inputs[0].shape, a.outputs[0].shape));
  const bool include_pad = std::get<graph::PoolAttrs>(a.node.attrs).count_include_pad;
  TS_CUDA_RETURN_IF_ERROR(
      LaunchAveragePool(a.inputs[0].data, g, include_pad, a.outputs[0].data, a.ctx.stream));
  return absl::OkStatus();
}

absl::Status AveragePoolBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  TS_RETURN_IF_ERROR(ZeroFill(dx, a.ctx.stream));
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return absl::OkStatus();
  TS_ASSIGN_OR_RETURN(const PoolGeometry g,
                      MakePoolGeometry(a.node, a.inputs[0].shape, a.outputs[0].shape));
  const bool include_pad = std::get<graph::PoolAttrs>(a.node.attrs).count_include_pad;
  TS_CUDA_RETURN_IF_ERROR(LaunchAveragePoolBackward(dy, g, include_pad, dx.data, a.ctx.stream));
  return absl::OkStatus();
}

// X as [planes, size]: planes = N * C, size = the spatial extent.
void Planes(const graph::Shape& x, int64_t* planes, int64_t* size) {
  *planes = x.size() < 2 ? 0 : x[0] * x[1];
  int64_t total = 1;
  for (int64_t d : x) total *= d;
  *size = *planes == 0 ? 0 : total / *planes;
}

absl::Status GlobalAveragePoolForward(const FwdArgs& a) {
  int64_t planes, size;
  Planes(a.inputs[0].shape, &planes, &size);
  TS_CUDA_RETURN_IF_ERROR(
      LaunchGlobalAveragePool(a.inputs[0].data, planes, size, a.outputs[0].data, a.ctx.stream));
  return absl::OkStatus();
}

absl::Status GlobalAveragePoolBackward(const BwdArgs& a) {
  const Tensor& dx = a.grad_inputs[0];
  if (!dx.present()) return absl::OkStatus();
  int64_t planes, size;
  Planes(dx.shape, &planes, &size);
  TS_CUDA_RETURN_IF_ERROR(
      LaunchGlobalAveragePoolBackward(GradOut(a, 0), planes, size, dx.data, a.ctx.stream));
  return absl::OkStatus();
}

}  // namespace

void RegisterCudaConvPool(OpTable& table) {
  RegisterCudaConv(table);
  RegisterCudaBatchNorm(table);
  Slot(table, OpKind::kMaxPool) = {&MaxPoolForward, &MaxPoolBackward};
  Slot(table, OpKind::kAveragePool) = {&AveragePoolForward, &AveragePoolBackward};
  Slot(table, OpKind::kGlobalAveragePool) = {&GlobalAveragePoolForward,
                                             &GlobalAveragePoolBackward};
}

}  // namespace tessera::exec::cuda
