// CUDA BatchNormalization(X[N,C,...], scale, bias, running_mean, running_var) with custom kernels
// (bn_kernels.cu) that follow the CPU kernel (exec/cpu/kernels_norm.cc) exactly:
// - training (ctx.training): batch mean and biased variance per channel, statistics in float64.
//   The running statistics are not read, not written, and get a zero gradient. As on the CPU,
//   updating them is left to their owner: Forward leaves the batch mean in state.buffers[0],
//   the inverse std in buffers[1] and the unbiased batch variance in buffers[2] (C floats each,
//   device memory) for running = momentum * running + (1 - momentum) * batch.
// - inference: running_mean/running_var are used (checked on the host: var + epsilon <= 0 is
//   InvalidArgument naming the channel) and differentiated.
// state.ints[0][0] is 1 in training, 0 in inference (read by Backward, as on the CPU).
//
// cuDNN's batch norm is not used: it updates the running statistics itself (the CPU kernel leaves
// that to their owner) and cannot give their gradients in inference.
#include <cmath>

#include "tessera/exec/cuda/conv_pool_launch.h"
#include "tessera/exec/cuda/ops_impl.h"

namespace tessera::exec::cuda {
namespace {

using graph::OpKind;

struct ChannelLayout {
  int64_t n = 0, c = 0, inner = 0;  // X is [n, c, inner] in memory
};

absl::StatusOr<ChannelLayout> Channels(const graph::Node& node, absl::Span<const Tensor> in) {
  if (in.size() < 5) return NodeError(node, "needs X, scale, bias, running_mean, running_var");
  const Tensor& x = in[0];
  if (x.shape.size() < 2) return NodeError(node, "X must be [N, C, ...]");
  ChannelLayout l{.n = x.shape[0], .c = x.shape[1]};
  l.inner = l.n * l.c == 0 ? 0 : x.size() / (l.n * l.c);
  return l;
}

// Copies `n` floats from the device to the host (synchronising the stream).
absl::StatusOr<std::vector<float>> ToHost(const float* src, int64_t n, cudaStream_t stream) {
  std::vector<float> out(n);
  if (n == 0) return out;
  TS_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(out.data(), src, sizeof(float) * n, cudaMemcpyDeviceToHost, stream));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return out;
}

// New scratch holding `v` (at least one float).
absl::StatusOr<memory::DeviceAllocation> ToDevice(const FwdArgs& a, const std::vector<float>& v) {
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation b, Scratch<float>(a.node, a.ctx, v.size()));
  if (!v.empty()) {
    TS_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(b.data(), v.data(), sizeof(float) * v.size(),
                                            cudaMemcpyHostToDevice, a.ctx.stream));
    TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));  // `v` may die before the copy
  }
  return b;
}

// Inference: mean = running_mean, invstd = 1/sqrt(running_var + epsilon), and the affine map
// Y = X k + shift, computed on the host in float64 as the CPU kernel does. Fills state.buffers
// with mean and invstd and returns k and shift.
absl::Status InferenceStatistics(const FwdArgs& a, const ChannelLayout& l, double epsilon,
                                 memory::DeviceAllocation* k_out,
                                 memory::DeviceAllocation* shift_out) {
  const cudaStream_t stream = a.ctx.stream;
  TS_ASSIGN_OR_RETURN(const std::vector<float> scale, ToHost(a.inputs[1].data, l.c, stream));
  TS_ASSIGN_OR_RETURN(const std::vector<float> bias, ToHost(a.inputs[2].data, l.c, stream));
  TS_ASSIGN_OR_RETURN(const std::vector<float> running_mean,
                      ToHost(a.inputs[3].data, l.c, stream));
  TS_ASSIGN_OR_RETURN(const std::vector<float> running_var, ToHost(a.inputs[4].data, l.c, stream));
  std::vector<float> mean(l.c), invstd(l.c), k(l.c), shift(l.c);
  for (int64_t c = 0; c < l.c; ++c) {
    const double var = static_cast<double>(running_var[c]) + epsilon;
    if (!(var > 0)) {
      return NodeError(a.node, absl::StrCat("running_var[", c, "] + epsilon is ", var,
                                            "; the running variance must be non-negative "
                                            "(check the loaded statistics)"));
    }
    const double inv = 1.0 / std::sqrt(var);
    mean[c] = running_mean[c];
    invstd[c] = static_cast<float>(inv);
    k[c] = static_cast<float>(scale[c] * inv);
    shift[c] = static_cast<float>(bias[c] - scale[c] * inv * running_mean[c]);
  }
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation mean_dev, ToDevice(a, mean));
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation invstd_dev, ToDevice(a, invstd));
  TS_ASSIGN_OR_RETURN(*k_out, ToDevice(a, k));
  TS_ASSIGN_OR_RETURN(*shift_out, ToDevice(a, shift));
  a.state.buffers.push_back(std::move(mean_dev));
  a.state.buffers.push_back(std::move(invstd_dev));
  return absl::OkStatus();
}

absl::Status BatchNormForward(const FwdArgs& a) {
  TS_ASSIGN_OR_RETURN(const ChannelLayout l, Channels(a.node, a.inputs));
  for (int i = 1; i < 5; ++i) {
    if (!a.inputs[i].present()) {
      return NodeError(a.node, "scale, bias, running_mean and running_var must all be given");
    }
  }
  const double epsilon = std::get<graph::BatchNormAttrs>(a.node.attrs).epsilon;
  const cudaStream_t stream = a.ctx.stream;
  memory::DeviceAllocation k, shift;
  if (a.ctx.training) {
    TS_ASSIGN_OR_RETURN(memory::DeviceAllocation mean, Scratch<float>(a.node, a.ctx, l.c));
    TS_ASSIGN_OR_RETURN(memory::DeviceAllocation invstd, Scratch<float>(a.node, a.ctx, l.c));
    TS_ASSIGN_OR_RETURN(memory::DeviceAllocation unbiased, Scratch<float>(a.node, a.ctx, l.c));
    TS_ASSIGN_OR_RETURN(k, Scratch<float>(a.node, a.ctx, l.c));
    TS_ASSIGN_OR_RETURN(shift, Scratch<float>(a.node, a.ctx, l.c));
    TS_CUDA_RETURN_IF_ERROR(LaunchBatchNormStats(
        a.inputs[0].data, l.n, l.c, l.inner, epsilon, a.inputs[1].data, a.inputs[2].data,
        As<float>(mean), As<float>(invstd), As<float>(unbiased), As<float>(k), As<float>(shift),
        stream));
    a.state.buffers.push_back(std::move(mean));
    a.state.buffers.push_back(std::move(invstd));
    a.state.buffers.push_back(std::move(unbiased));
  } else {
    TS_RETURN_IF_ERROR(InferenceStatistics(a, l, epsilon, &k, &shift));
  }
  a.state.ints = {std::vector<int64_t>{a.ctx.training ? 1 : 0}};
  TS_CUDA_RETURN_IF_ERROR(LaunchBatchNormApply(a.inputs[0].data, As<const float>(k),
                                               As<const float>(shift), l.n, l.c, l.inner,
                                               a.outputs[0].data, stream));
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));  // k and shift die here
  return absl::OkStatus();
}

float* GradData(const BwdArgs& a, size_t i) {
  return i < a.grad_inputs.size() ? a.grad_inputs[i].data : nullptr;
}

absl::Status BatchNormBackward(const BwdArgs& a) {
  for (const Tensor& g : a.grad_inputs) TS_RETURN_IF_ERROR(ZeroFill(g, a.ctx.stream));
  const float* dy = GradOut(a, 0);
  if (dy == nullptr) return absl::OkStatus();
  TS_ASSIGN_OR_RETURN(const ChannelLayout l, Channels(a.node, a.inputs));
  if (a.state.ints.empty() || a.state.ints[0].empty() || a.state.buffers.size() < 2) {
    return NodeError(a.node, "backward without a forward");
  }
  const bool training = a.state.ints[0][0] != 0;
  float* dx = GradData(a, 0);
  float* dscale = GradData(a, 1);
  float* dvar = training ? nullptr : GradData(a, 4);
  // X is read only for the gradients that need xhat (the runtime keeps X exactly then).
  const float* x = (dx != nullptr || dscale != nullptr || dvar != nullptr) ? a.inputs[0].data
                                                                           : nullptr;
  const float* mean = As<const float>(a.state.buffers[0]);
  TS_ASSIGN_OR_RETURN(memory::DeviceAllocation coef, Scratch<float>(a.node, a.ctx, 3 * l.c));
  TS_CUDA_RETURN_IF_ERROR(LaunchBatchNormBackwardReduce(
      x, dy, a.inputs[1].data, mean, As<const float>(a.state.buffers[1]), l.n, l.c, l.inner,
      training, As<float>(coef), dscale, GradData(a, 2), training ? nullptr : GradData(a, 3),
      dvar, a.ctx.stream));
  if (dx != nullptr) {
    TS_CUDA_RETURN_IF_ERROR(LaunchBatchNormBackwardDx(x, dy, mean, As<const float>(coef), l.n,
                                                      l.c, l.inner, training, dx, a.ctx.stream));
  }
  TS_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(a.ctx.stream));  // coef dies here
  return absl::OkStatus();
}

}  // namespace

void RegisterCudaBatchNorm(OpTable& table) {
  Slot(table, OpKind::kBatchNorm) = {&BatchNormForward, &BatchNormBackward};
}

}  // namespace tessera::exec::cuda
