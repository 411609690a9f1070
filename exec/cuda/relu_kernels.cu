// Element-wise ReLU kernels. Plain CUDA, no Abseil here: the host wrappers in
// kernels.cc turn launch errors into absl::Status.
#include <cstdint>

#include <cuda_runtime.h>

namespace tessera::exec::cuda {
namespace {

__global__ void ReluForwardKernel(const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    y[i] = x[i] > 0.f ? x[i] : 0.f;
  }
}

__global__ void ReluBackwardKernel(const float* y, const float* dy, float* dx, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    dx[i] = y[i] > 0.f ? dy[i] : 0.f;
  }
}

int Blocks(int64_t n, int threads) {
  const int64_t blocks = (n + threads - 1) / threads;
  return static_cast<int>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
}

}  // namespace

cudaError_t LaunchReluForward(const float* x, float* y, int64_t n, cudaStream_t stream) {
  constexpr int kThreads = 256;
  ReluForwardKernel<<<Blocks(n, kThreads), kThreads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}

cudaError_t LaunchReluBackward(const float* y, const float* dy, float* dx, int64_t n,
                               cudaStream_t stream) {
  constexpr int kThreads = 256;
  ReluBackwardKernel<<<Blocks(n, kThreads), kThreads, 0, stream>>>(y, dy, dx, n);
  return cudaGetLastError();
}

}  // namespace tessera::exec::cuda
