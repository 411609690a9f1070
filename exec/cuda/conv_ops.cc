// CUDA Conv(X[N,C,s...], W[Cout,C/groups,k...], B?) with cuDNN: 1-, 2- and 3-D (a 1-D conv runs
// as 2-D with a unit axis in front), strides, dilations, groups (grouped and depthwise), and the
// CPU kernel's pads (exec/cpu/kernels_conv_pool.cc). cuDNN pads both ends of an axis alike, so
// asymmetric pads are applied explicitly: X is copied into a zero-padded scratch tensor first,
// and dX is cropped out of the padded gradient. Products run in FP32 FMA math (no TF32), so
// the results match the CPU's float products to rounding, unless KernelContext::tf32 lets cuDNN
// use TF32 tensor cores (about 3 significant digits). Nothing is kept for backward; X and W
// are read again (the runtime keeps each exactly when the other needs a gradient).
#include <climits>

#include "tessera/exec/cuda/ops_impl.h"

namespace tessera::exec::cuda {
namespace {

using graph::OpKind;

// A cuDNN descriptor, destroyed with the scope.
template <typename T, cudnnStatus_t (*kDestroy)(T)>
class Descriptor {
 public:
  Descriptor() = default;
  ~Descriptor() {
    if (handle_ != nullptr) kDestroy(handle_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  T get() const { return handle_; }
  T* address() { return &handle_; }

 private:
  T handle_ = nullptr;
};
using TensorDesc = Descriptor<cudnnTensorDescriptor_t, &cudnnDestroyTensorDescriptor>;
using FilterDesc = Descriptor<cudnnFilterDescriptor_t, &cudnnDestroyFilterDescriptor>;
using ConvDesc = Descriptor<cudnnConvolutionDescriptor_t, &cudnnDestroyConvolutionDescriptor>;

std::vector<int64_t> OrFill(const std::vector<int64_t>& v, size_t n, int64_t fill) {
  return v.empty() ? std::vector<int64_t>(n, fill) : v;
}

// What cuDNN is told: the shapes of X (padded when `explicit_pad`), W, Y and the bias
// ([1, Cout, 1...]), and per spatial axis the pad, stride and dilation. A 1-D conv gets a unit
// spatial axis in front. x_dims/padded_dims/pad_begin drive the explicit padding (LaunchPad).
struct ConvGeometry {
  std::vector<int> x, w, y, bias;
  std::vector<int> pad, stride, dilation;
  int groups = 1;
  bool explicit_pad = false;
  Dims x_dims, padded_dims;
  std::vector<int64_t> pad_begin, crop;  // per axis of X (0 on N and C); crop = -pad_begin
};

absl::StatusOr<std::vector<int>> ToInts(const graph::Node& node, const graph::Shape& shape) {
  std::vector<int> out;
  int64_t total = 1;
  for (int64_t d : shape) {
    total *= d;
    if (d > INT_MAX || total > INT_MAX) {
      return NodeError(node, absl::StrCat("tensor ", graph::ShapeString(shape),
                                          " exceeds cuDNN's 2^31 elements; split the batch"));
    }
    out.push_back(static_cast<int>(d));
  }
  return out;
}

absl::StatusOr<ConvGeometry> MakeConvGeometry(const graph::Node& node, const graph::Shape& x,
                                              const graph::Shape& w, const graph::Shape& y) {
  const auto& attrs = std::get<graph::ConvAttrs>(node.attrs);
  if (x.size() < 3 || w.size() != x.size() || y.size() != x.size()) {
    return NodeError(node, "X, W and Y must be [N, C, spatial...] of one rank");
  }
  const size_t s = x.size() - 2;
  if (s > 3) {
    return absl::UnimplementedError(absl::StrCat(
        "node '", node.name, "' (Conv, CUDA): ", s,
        " spatial axes; cuDNN convolves 1-, 2- and 3-D only: run the node on the CPU back-end"));
  }
  if (x[1] == 0 || w[0] == 0) return NodeError(node, "X and W need at least one channel");
  const std::vector<int64_t> strides = OrFill(attrs.strides, s, 1);
  const std::vector<int64_t> dilations = OrFill(attrs.dilations, s, 1);
  const std::vector<int64_t> pads = OrFill(attrs.pads, 2 * s, 0);
  if (strides.size() != s || dilations.size() != s || pads.size() != 2 * s) {
    return NodeError(node, "strides/dilations/pads do not match the spatial rank");
  }
  ConvGeometry g;
  g.groups = static_cast<int>(attrs.groups);
  for (size_t d = 0; d < s; ++d) g.explicit_pad |= pads[d] != pads[s + d];
  graph::Shape cudnn_x = x;
  g.pad_begin.assign(x.size(), 0);
  g.crop.assign(x.size(), 0);
  for (size_t d = 0; d < s; ++d) {
    g.pad.push_back(g.explicit_pad ? 0 : static_cast<int>(pads[d]));
    g.stride.push_back(static_cast<int>(strides[d]));
    g.dilation.push_back(static_cast<int>(dilations[d]));
    if (g.explicit_pad) {
      cudnn_x[2 + d] += pads[d] + pads[s + d];
      g.pad_begin[2 + d] = pads[d];
      g.crop[2 + d] = -pads[d];
    }
  }
  TS_ASSIGN_OR_RETURN(g.x_dims, ToDims(node, x));
  TS_ASSIGN_OR_RETURN(g.padded_dims, ToDims(node, cudnn_x));
  graph::Shape cudnn_w = w, cudnn_y = y, bias(x.size(), 1);
  bias[1] = w[0];
  if (s == 1) {  // 1-D as 2-D: [N, C, L] -> [N, C, 1, L], a unit kernel with no pad there
    for (graph::Shape* t : {&cudnn_x, &cudnn_w, &cudnn_y, &bias}) t->insert(t->begin() + 2, 1);
    g.pad.insert(g.pad.begin(), 0);
    g.stride.insert(g.stride.begin(), 1);
    g.dilation.insert(g.dilation.begin(), 1);
  }
  TS_ASSIGN_OR_RETURN(g.x, ToInts(node, cudnn_x));
  TS_ASSIGN_OR_RETURN(g.w, ToInts(node, cudnn_w));
  TS_ASSIGN_OR_RETURN(g.y, ToInts(node, cudnn_y));
  TS_ASSIGN_OR_RETURN(g.bias, ToInts(node, bias));
  for (int64_t v : pads) {
    if (v > INT_MAX) return NodeError(node, "a pad exceeds cuDNN's int");
  }
  return g;
}

// cuDNN descriptors of one convolution.
struct ConvDescriptors {
  TensorDesc x, y, bias;
  FilterDesc w;
  ConvDesc conv;
};

absl::Status SetTensor(cudnnTensorDescriptor_t desc, const std::vector<int>& dims) {
  std::vector<int> strides(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * dims[d + 1];
  }
  TS_CUDNN_RETURN_IF_ERROR(cudnnSetTensorNdDescriptor(desc, CUDNN_DATA_FLOAT,
                                                      static_cast<int>(dims.size()), dims.data(),
                                                      strides.data()));
  return absl::OkStatus();
}

absl::Status Describe(const graph::Node& node, const ConvGeometry& g, bool tf32,
                      ConvDescriptors& d) {
  TS_CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(d.x.address()));
  TS_CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(d.y.address()));
  TS_CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(d.bias.address()));
  TS_CUDNN_RETURN_IF_ERROR(cudnnCreateFilterDescriptor(d.w.address()));
  TS_CUDNN_RETURN_IF_ERROR(cudnnCreateConvolutionDescriptor(d.conv.address()));
  TS_RETURN_IF_ERROR(SetTensor(d.x.get(), g.x));
  TS_RETURN_IF_ERROR(SetTensor(d.y.get(), g.y));
  TS_RETURN_IF_ERROR(SetTensor(d.bias.get(), g.bias));
  const int rank = static_cast<int>(g.w.size());
  TS_CUDNN_RETURN_IF_ERROR(cudnnSetFilterNdDescriptor(d.w.get(), CUDNN_DATA_FLOAT,
                                                      CUDNN_TENSOR_NCHW, rank, g.w.data()));
  TS_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionNdDescriptor(
      d.conv.get(), rank - 2, g.pad.data(), g.stride.data(), g.dilation.data(),
      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  TS_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionGroupCount(d.conv.get(), g.groups));
  // FMA math, not CUDNN_DEFAULT_MATH: the default lets cuDNN use TF32 on Ampere and later.
  TS_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(
      d.conv.get(), tf32 ? CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION : CUDNN_FMA_MATH));
  std::vector<int> out(rank);
  TS_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionNdForwardOutputDim(d.conv.get(), d.x.get(),
                                                                 d.w.get(), rank, out.data()));
  if (out != g.y) {
    return NodeError(node, "cuDNN's output shape differs from the inferred Y; re-run shape "
                           "inference on the graph");
  }
  return absl::OkStatus();
}

// The first algorithm cuDNN's heuristics rank as supported, in FP32 (no tensor-op math) unless
// `tf32`. With TF32 the descriptor takes the algorithm's math type, as cuDNN picks tensor-core
// kernels from both (PyTorch does the same).
template <typename Perf>
absl::StatusOr<Perf> Usable(const graph::Node& node, const Perf* perf, int returned,
                            absl::string_view pass, bool tf32, cudnnConvolutionDescriptor_t conv) {
  for (int i = 0; i < returned; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    if (tf32) {
      TS_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(conv, perf[i].mathType));
      return perf[i];
    }
    if (perf[i].mathType != CUDNN_TENSOR_OP_MATH &&
        perf[i].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) {
      return perf[i];
    }
  }
  return absl::UnimplementedError(absl::StrCat("node '", node.name, "' (Conv, CUDA): cuDNN has no ",
                                               pass, " algorithm for this convolution; run the "
                                               "node on the CPU back-end"));
}

// cuDNN's workspace of `bytes` (at least one float).
absl::StatusOr<memory::DeviceAllocation> Workspace(const graph::Node& node,
                                                   const KernelContext& ctx, size_t bytes) {
  return Scratch<float>(node, ctx, (bytes + sizeof(float) - 1) / sizeof(float));
}

absl::StatusOr<cudnnHandle_t> Dnn(const graph::Node& node, const KernelContext& ctx) {
  if (ctx.dnn == nullptr) {
    return NodeError(node, "needs a cuDNN handle in KernelContext::dnn (CudnnHandle::Create)");
  }
  TS_CUDNN_RETURN_IF_ERROR(cudnnSetStream(ctx.dnn, ctx.stream));
  return ctx.dnn;
}

// X as cuDNN sees it: X itself, or (explicit_pad) a zero-padded copy kept in `scratch`.
absl::StatusOr<const float*> CudnnInput(const graph::Node& node, const KernelContext& ctx,
                                        const ConvGeometry& g, const float* x,
                                        memory::DeviceAllocation* scratch) {
  if (!g.explicit_pad) return x;
  TS_ASSIGN_OR_RETURN(*scratch, Scratch<float>(node, ctx, Count(g.padded_dims)));
  TS_CUDA_RETURN_IF_ERROR(LaunchPad(PadCode::kConstant, x, g.x_dims, As<float>(*scratch),
                                    g.padded_dims, g.pad_begin.data(), 0.f, ctx.stream));
  return As<const float>(*scratch);
}

absl::Status ConvForward(const FwdArgs& a) {
  const Tensor& y = a.outputs[0];
  TS_ASSIGN_OR_RETURN(const ConvGeometry g,
                      MakeConvGeometry(a.node, a.inputs[0].shape, a.inputs[1].shape, y.shape));
  TS_ASSIGN_OR_RETURN(const cudnnHandle_t h, Dnn(a.node, a.ctx));
  if (y.size() == 0) return absl::OkStatus();
  ConvDescriptors d;
  TS_RETURN_IF_ERROR(Describe(a.node, g, a.ctx.tf32, d));
  memory::DeviceAllocation padded;
  TS_ASSIGN_OR_RETURN(const float* x, CudnnInput(a.node, a.ctx, g, a.inputs[0].data, &padded));
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  TS_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionForwardAlgorithm_v7(
      h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(), CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
      &returned, perf));
  TS_ASSIGN_OR_RETURN(const auto algo,
                      Usable(a.node, perf, returned, "forward", a.ctx.tf32, d.conv.get()));
  size_t bytes = 0;
  TS_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionForwardWorkspaceSize(
      h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(), algo.algo, &bytes));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation workspace, Workspace(a.node, a.ctx, bytes));
  const float one = 1.f, zero = 0.f;
  TS_CUDNN_RETURN_IF_ERROR(cudnnConvolutionForward(
      h, &one, d.x.get(), x, d.w.get(), a.inputs[1].data, d.conv.get(), algo.algo,
      workspace.data(), bytes, &zero, d.y.get(), y.data));
  if (a.inputs.size() > 2 && a.inputs[2].present()) {  // Y += B over [1, Cout, 1...]
    TS_CUDNN_RETURN_IF_ERROR(
        cudnnAddTensor(h, &one, d.bias.get(), a.inputs[2].data, &one, d.y.get(), y.data));
  }
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));  // the scratch buffers die here
  return absl::OkStatus();
}

// dW = the filter gradient of X (padded when explicit_pad) and dY.
absl::Status ConvFilterGrad(const BwdArgs& a, const ConvGeometry& g, const ConvDescriptors& d,
                            cudnnHandle_t h, const float* dy) {
  memory::DeviceAllocation padded;
  TS_ASSIGN_OR_RETURN(const float* x, CudnnInput(a.node, a.ctx, g, a.inputs[0].data, &padded));
  cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  int returned = 0;
  TS_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
      h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(), CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
      &returned, perf));
  TS_ASSIGN_OR_RETURN(const auto algo,
                      Usable(a.node, perf, returned, "filter-gradient", a.ctx.tf32,
                             d.conv.get()));
  size_t bytes = 0;
  TS_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardFilterWorkspaceSize(
      h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(), algo.algo, &bytes));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation workspace, Workspace(a.node, a.ctx, bytes));
  const float one = 1.f, zero = 0.f;
  TS_CUDNN_RETURN_IF_ERROR(cudnnConvolutionBackwardFilter(
      h, &one, d.x.get(), x, d.y.get(), dy, d.conv.get(), algo.algo, workspace.data(), bytes,
      &zero, d.w.get(), a.grad_inputs[1].data));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));  // the workspace dies here
  return absl::OkStatus();
}

// dX = the data gradient of W and dY, computed into a padded scratch and cropped when
// explicit_pad.
absl::Status ConvDataGrad(const BwdArgs& a, const ConvGeometry& g, const ConvDescriptors& d,
                          cudnnHandle_t h, const float* dy) {
  const Tensor& dx = a.grad_inputs[0];
  memory::DeviceAllocation padded;
  float* target = dx.data;
  if (g.explicit_pad) {
    TS_ASSIGN_OR_RETURN(padded, Scratch<float>(a.node, a.ctx, Count(g.padded_dims)));
    target = As<float>(padded);
  }
  cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  int returned = 0;
  TS_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataAlgorithm_v7(
      h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(), CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
      &returned, perf));
  TS_ASSIGN_OR_RETURN(const auto algo,
                      Usable(a.node, perf, returned, "data-gradient", a.ctx.tf32,
                             d.conv.get()));
  size_t bytes = 0;
  TS_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataWorkspaceSize(
      h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(), algo.algo, &bytes));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation workspace, Workspace(a.node, a.ctx, bytes));
  const float one = 1.f, zero = 0.f;
  TS_CUDNN_RETURN_IF_ERROR(cudnnConvolutionBackwardData(
      h, &one, d.w.get(), a.inputs[1].data, d.y.get(), dy, d.conv.get(), algo.algo,
      workspace.data(), bytes, &zero, d.x.get(), target));
  if (g.explicit_pad) {  // dX = the padded gradient without its pads (a negative pad crops)
    TS_CUDA_RETURN_IF_ERROR(LaunchPad(PadCode::kConstant, As<float>(padded), g.padded_dims, dx.data,
                                      g.x_dims, g.crop.data(), 0.f, a.ctx.stream));
  }
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));  // the scratch buffers die here
  return absl::OkStatus();
}

absl::Status ConvBackward(const BwdArgs& a) {
  TS_ASSIGN_OR_RETURN(const ConvGeometry g,
                      MakeConvGeometry(a.node, a.inputs[0].shape, a.inputs[1].shape,
                                       a.outputs[0].shape));
  for (const Tensor& t : a.grad_inputs) TS_RETURN_IF_ERROR(ZeroFill(t, a.ctx.stream));
  const float* dy = GradOut(a, 0);
  if (dy == nullptr || a.outputs[0].size() == 0) return absl::OkStatus();
  TS_ASSIGN_OR_RETURN(const cudnnHandle_t h, Dnn(a.node, a.ctx));
  ConvDescriptors d;
  TS_RETURN_IF_ERROR(Describe(a.node, g, a.ctx.tf32, d));
  if (a.grad_inputs.size() > 2 && a.grad_inputs[2].present()) {  // dB: dY summed over all but Cout
    const float one = 1.f, zero = 0.f;
    TS_CUDNN_RETURN_IF_ERROR(cudnnConvolutionBackwardBias(h, &one, d.y.get(), dy, &zero,
                                                          d.bias.get(), a.grad_inputs[2].data));
  }
  if (a.grad_inputs[1].present()) TS_RETURN_IF_ERROR(ConvFilterGrad(a, g, d, h, dy));
  if (a.grad_inputs[0].present()) TS_RETURN_IF_ERROR(ConvDataGrad(a, g, d, h, dy));
  return absl::OkStatus();
}

}  // namespace

void RegisterCudaConv(OpTable& table) {
  Slot(table, OpKind::kConv) = {&ConvForward, &ConvBackward};
}

}  // namespace tessera::exec::cuda
