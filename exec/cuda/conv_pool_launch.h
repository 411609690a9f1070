// Internal to the CUDA back-end: the launchers of the pooling and BatchNormalization kernels
// (conv_pool_kernels.cu, bn_kernels.cu), called by conv_pool_ops.cc and batchnorm_ops.cc. Plain
// C++17 and CUDA types only, as launch.h. Every launcher enqueues on `stream` and returns
// cudaGetLastError(); nothing is launched for an empty tensor.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "tessera/exec/cuda/launch.h"

namespace tessera::exec::cuda {

// The geometry of a pooling window over X[planes, in...] -> Y[planes, out...] (planes = N*C), as
// the CPU kernel's Window (exec/cpu/kernels_conv_pool.cc): per spatial axis the extents, the
// kernel, the stride and the pads at both ends. No dilation (pooling has none).
struct PoolGeometry {
  int rank = 0;  // spatial axes, at most kMaxRank
  int64_t in[kMaxRank] = {}, out[kMaxRank] = {}, kernel[kMaxRank] = {}, stride[kMaxRank] = {};
  int64_t pad_begin[kMaxRank] = {}, pad_end[kMaxRank] = {};
  int64_t planes = 0, in_size = 1, out_size = 1;  // in_size/out_size: elements per plane
};

// MaxPool: Y = max over the window's points inside X, first maximum in row-major window order
// (padding never wins); arg = its offset in the (n, c) plane, -1 (and Y = 0) for an empty window.
cudaError_t LaunchMaxPool(const float* x, const PoolGeometry& g, float* y, int32_t* arg,
                          cudaStream_t stream);
// dx (zeroed by the caller) += dy at each output's arg-max.
cudaError_t LaunchMaxPoolBackward(const int32_t* arg, const float* dy, const PoolGeometry& g,
                                  float* dx, cudaStream_t stream);
// AveragePool: the window's sum over X divided by the CPU's divisor (the points inside X, or
// with count_include_pad those inside X plus the pads, at least 1).
cudaError_t LaunchAveragePool(const float* x, const PoolGeometry& g, bool count_include_pad,
                              float* y, cudaStream_t stream);
// dx (zeroed by the caller) += dy / divisor over each output's window.
cudaError_t LaunchAveragePoolBackward(const float* dy, const PoolGeometry& g,
                                      bool count_include_pad, float* dx, cudaStream_t stream);
// GlobalAveragePool over x[planes, size]: y[p] = mean of its plane (0 when size is 0).
cudaError_t LaunchGlobalAveragePool(const float* x, int64_t planes, int64_t size, float* y,
                                    cudaStream_t stream);
// dx[p, i] = dy[p] / size, or 0 everywhere when dy is null.
cudaError_t LaunchGlobalAveragePoolBackward(const float* dy, int64_t planes, int64_t size,
                                            float* dx, cudaStream_t stream);

// BatchNormalization over X[n, c, inner] (per channel; statistics accumulated in float64):
// batch mean, inverse std 1/sqrt(biased var + eps) and unbiased variance (0 when n*inner <= 1),
// and the per-channel affine map Y = X * k + shift with k = scale*invstd and
// shift = bias - scale*invstd*mean.
cudaError_t LaunchBatchNormStats(const float* x, int64_t n, int64_t c, int64_t inner,
                                 double epsilon, const float* scale, const float* bias,
                                 float* mean, float* invstd, float* unbiased, float* k,
                                 float* shift, cudaStream_t stream);
// y = x * k[channel] + shift[channel].
cudaError_t LaunchBatchNormApply(const float* x, const float* k, const float* shift, int64_t n,
                                 int64_t c, int64_t inner, float* y, cudaStream_t stream);
// Per channel: sum dy and sum dy * xhat (x may be null when no gradient needs xhat: the sum is
// then 0); writes dscale, dbias and (not training) the running statistics' gradients where
// those pointers are non-null, and coef[3c..3c+2] = k, a1, a2, the factors of
// dX = k * (dy - a1 - (x - mean) * a2) (a1 = a2 = 0 when not training).
cudaError_t LaunchBatchNormBackwardReduce(const float* x, const float* dy, const float* scale,
                                          const float* mean, const float* invstd, int64_t n,
                                          int64_t c, int64_t inner, bool training, float* coef,
                                          float* dscale, float* dbias, float* dmean,
                                          float* dvar, cudaStream_t stream);
// dx = coef_k * (dy - coef_a1 - (x - mean) * coef_a2) per channel when training; coef_k * dy
// (x not read) otherwise.
cudaError_t LaunchBatchNormBackwardDx(const float* x, const float* dy, const float* mean,
                                      const float* coef, int64_t n, int64_t c, int64_t inner,
                                      bool training, float* dx, cudaStream_t stream);

}  // namespace tessera::exec::cuda
