// BatchNormalization kernels over X[n, c, inner], the CPU kernel's arithmetic
// (exec/cpu/kernels_norm.cc): per-channel sums in float64, one block per channel (grid-stride
// over channels) with a shared-memory tree sum; element-wise passes one thread per element.
// See conv_pool_launch.h.
#include <cmath>

#include "tessera/exec/cuda/conv_pool_launch.h"
#include "tessera/exec/cuda/device_util.cuh"

namespace tessera::exec::cuda {
namespace {

// Sum of every thread's `v` over the block (blockDim.x == kThreads, a power of two); every
// thread gets the total. All threads of the block must call it.
__device__ double BlockSum(double v, double* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();  // `shared` may be reused right after
  return total;
}

// Offset in X of element j (of n * inner) of channel ch.
__device__ int64_t ChannelOffset(int64_t j, int64_t ch, int64_t c, int64_t inner) {
  return ((j / inner) * c + ch) * inner + j % inner;
}

__global__ void StatsKernel(const float* x, int64_t n, int64_t c, int64_t inner, double epsilon,
                            const float* scale, const float* bias, float* mean_out,
                            float* invstd_out, float* unbiased_out, float* k_out,
                            float* shift_out) {
  __shared__ double shared[kThreads];
  const int64_t count = n * inner;
  const double m = static_cast<double>(count > 1 ? count : 1);
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    double s = 0;
    for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
      s += x[ChannelOffset(j, ch, c, inner)];
    }
    const double mean = BlockSum(s, shared) / m;
    double sq = 0;  // two passes, as the CPU kernel: the centred squares
    for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
      const double d = x[ChannelOffset(j, ch, c, inner)] - mean;
      sq += d * d;
    }
    sq = BlockSum(sq, shared);
    if (threadIdx.x == 0) {
      const double invstd = 1.0 / sqrt(sq / m + epsilon);
      mean_out[ch] = static_cast<float>(mean);
      invstd_out[ch] = static_cast<float>(invstd);
      unbiased_out[ch] = count > 1 ? static_cast<float>(sq / static_cast<double>(count - 1)) : 0.f;
      k_out[ch] = static_cast<float>(scale[ch] * invstd);
      shift_out[ch] = static_cast<float>(bias[ch] - scale[ch] * invstd * mean);
    }
  }
}

__global__ void ApplyKernel(const float* x, const float* k, const float* shift, int64_t c,
                            int64_t inner, float* y, int64_t total) {
  TS_GRID_LOOP(j, total) {
    const int64_t ch = (j / inner) % c;
    y[j] = x[j] * k[ch] + shift[ch];
  }
}

__global__ void BackwardReduceKernel(const float* x, const float* dy, const float* scale,
                                     const float* mean, const float* invstd, int64_t n,
                                     int64_t c, int64_t inner, bool training, float* coef,
                                     float* dscale, float* dbias, float* dmean, float* dvar) {
  __shared__ double shared[kThreads];
  const int64_t count = n * inner;
  const double m = static_cast<double>(count > 1 ? count : 1);
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    const double mu = mean[ch];
    double s = 0, sx = 0;
    for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
      const int64_t off = ChannelOffset(j, ch, c, inner);
      const double g = dy[off];
      s += g;
      if (x != nullptr) sx += g * (x[off] - mu);
    }
    const double sum_dy = BlockSum(s, shared);
    const double inv = invstd[ch];
    const double sum_dy_xhat = BlockSum(sx, shared) * inv;
    if (threadIdx.x == 0) {
      const double k = scale[ch] * inv;
      coef[3 * ch] = static_cast<float>(k);
      coef[3 * ch + 1] = training ? static_cast<float>(sum_dy / m) : 0.f;
      coef[3 * ch + 2] = training ? static_cast<float>(sum_dy_xhat / m * inv) : 0.f;
      if (dscale != nullptr) dscale[ch] = static_cast<float>(sum_dy_xhat);
      if (dbias != nullptr) dbias[ch] = static_cast<float>(sum_dy);
      if (!training && dmean != nullptr) dmean[ch] = static_cast<float>(-k * sum_dy);
      if (!training && dvar != nullptr) {
        dvar[ch] = static_cast<float>(-0.5 * k * inv * sum_dy_xhat);
      }
    }
  }
}

__global__ void BackwardDxKernel(const float* x, const float* dy, const float* mean,
                                 const float* coef, int64_t c, int64_t inner, bool training,
                                 float* dx, int64_t total) {
  TS_GRID_LOOP(j, total) {
    const int64_t ch = (j / inner) % c;
    const float* f = coef + 3 * ch;
    dx[j] = training ? f[0] * (dy[j] - f[1] - (x[j] - mean[ch]) * f[2]) : f[0] * dy[j];
  }
}

int ChannelBlocks(int64_t c) { return static_cast<int>(c < 65535 ? c : 65535); }

}  // namespace

cudaError_t LaunchBatchNormStats(const float* x, int64_t n, int64_t c, int64_t inner,
                                 double epsilon, const float* scale, const float* bias,
                                 float* mean, float* invstd, float* unbiased, float* k,
                                 float* shift, cudaStream_t stream) {
  if (c == 0) return cudaSuccess;
  StatsKernel<<<ChannelBlocks(c), kThreads, 0, stream>>>(x, n, c, inner, epsilon, scale, bias,
                                                         mean, invstd, unbiased, k, shift);
  return cudaGetLastError();
}

cudaError_t LaunchBatchNormApply(const float* x, const float* k, const float* shift, int64_t n,
                                 int64_t c, int64_t inner, float* y, cudaStream_t stream) {
  const int64_t total = n * c * inner;
  if (total == 0) return cudaSuccess;
  ApplyKernel<<<Blocks(total), kThreads, 0, stream>>>(x, k, shift, c, inner, y, total);
  return cudaGetLastError();
}

cudaError_t LaunchBatchNormBackwardReduce(const float* x, const float* dy, const float* scale,
                                          const float* mean, const float* invstd, int64_t n,
                                          int64_t c, int64_t inner, bool training, float* coef,
                                          float* dscale, float* dbias, float* dmean,
                                          float* dvar, cudaStream_t stream) {
  if (c == 0) return cudaSuccess;
  BackwardReduceKernel<<<ChannelBlocks(c), kThreads, 0, stream>>>(
      x, dy, scale, mean, invstd, n, c, inner, training, coef, dscale, dbias, dmean, dvar);
  return cudaGetLastError();
}

cudaError_t LaunchBatchNormBackwardDx(const float* x, const float* dy, const float* mean,
                                      const float* coef, int64_t n, int64_t c, int64_t inner,
                                      bool training, float* dx, cudaStream_t stream) {
  const int64_t total = n * c * inner;
  if (total == 0) return cudaSuccess;
  BackwardDxKernel<<<Blocks(total), kThreads, 0, stream>>>(x, dy, mean, coef, c, inner, training,
                                                           dx, total);
  return cudaGetLastError();
}

}  // namespace tessera::exec::cuda
