// Pooling kernels: MaxPool, AveragePool (any number of spatial axes, asymmetric pads, ceil_mode
// windows clipped to X) and GlobalAveragePool, with the CPU kernels' exact rules
// (exec/cpu/kernels_conv_pool.cc). One thread per output element walks its window in row-major
// order; the backwards scatter with atomicAdd into a zeroed dX. See conv_pool_launch.h.
#include "tessera/exec/cuda/conv_pool_launch.h"
#include "tessera/exec/cuda/device_util.cuh"

namespace tessera::exec::cuda {
namespace {

// The window of one output element clipped to X ([lo, hi) per axis), the number of its points
// inside X, and the CPU's count with the pads (a ceil_mode overhang past the end pad excluded).
struct Box {
  int64_t lo[kMaxRank];
  int64_t hi[kMaxRank];
  int64_t inside;
  int64_t padded;
};

__device__ Box WindowBox(const PoolGeometry& g, int64_t out_index) {
  Box b;
  b.inside = 1;
  b.padded = 1;
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t o = out_index % g.out[d];
    out_index /= g.out[d];
    const int64_t start = o * g.stride[d] - g.pad_begin[d];
    const int64_t end = start + g.kernel[d];
    const int64_t padded_end = end < g.in[d] + g.pad_end[d] ? end : g.in[d] + g.pad_end[d];
    b.lo[d] = start > 0 ? start : 0;
    b.hi[d] = end < g.in[d] ? end : g.in[d];
    b.inside *= b.hi[d] > b.lo[d] ? b.hi[d] - b.lo[d] : 0;
    b.padded *= padded_end - start;
  }
  return b;
}

// Offset in its plane of point t (row-major over the box, the last axis fastest) of a box with
// at least one point.
__device__ int64_t BoxPoint(const PoolGeometry& g, const Box& b, int64_t t) {
  int64_t offset = 0, plane_stride = 1;
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t len = b.hi[d] - b.lo[d];
    offset += (b.lo[d] + t % len) * plane_stride;
    t /= len;
    plane_stride *= g.in[d];
  }
  return offset;
}

__device__ float AverageScale(const Box& b, bool count_include_pad) {
  const int64_t divisor = count_include_pad ? b.padded : b.inside;
  return 1.f / static_cast<float>(divisor > 1 ? divisor : 1);
}

__global__ void MaxPoolKernel(const float* x, PoolGeometry g, float* y, int32_t* arg,
                              int64_t n) {
  TS_GRID_LOOP(j, n) {
    const Box b = WindowBox(g, j % g.out_size);
    const float* xp = x + (j / g.out_size) * g.in_size;
    int64_t best = -1;
    float best_value = 0.f;
    for (int64_t t = 0; t < b.inside; ++t) {
      const int64_t off = BoxPoint(g, b, t);
      if (best < 0 || xp[off] > best_value) {
        best = off;
        best_value = xp[off];
      }
    }
    arg[j] = static_cast<int32_t>(best);
    y[j] = best_value;
  }
}

__global__ void MaxPoolBackwardKernel(const int32_t* arg, const float* dy, PoolGeometry g,
                                      float* dx, int64_t n) {
  TS_GRID_LOOP(j, n) {
    if (arg[j] >= 0) atomicAdd(dx + (j / g.out_size) * g.in_size + arg[j], dy[j]);
  }
}

__global__ void AveragePoolKernel(const float* x, PoolGeometry g, bool count_include_pad,
                                  float* y, int64_t n) {
  TS_GRID_LOOP(j, n) {
    const Box b = WindowBox(g, j % g.out_size);
    const float* xp = x + (j / g.out_size) * g.in_size;
    float sum = 0.f;
    for (int64_t t = 0; t < b.inside; ++t) sum += xp[BoxPoint(g, b, t)];
    y[j] = sum * AverageScale(b, count_include_pad);
  }
}

__global__ void AveragePoolBackwardKernel(const float* dy, PoolGeometry g, bool count_include_pad,
                                          float* dx, int64_t n) {
  TS_GRID_LOOP(j, n) {
    const Box b = WindowBox(g, j % g.out_size);
    float* dxp = dx + (j / g.out_size) * g.in_size;
    const float grad = dy[j] * AverageScale(b, count_include_pad);
    for (int64_t t = 0; t < b.inside; ++t) atomicAdd(dxp + BoxPoint(g, b, t), grad);
  }
}

// One block per plane (grid-stride over planes): a shared-memory tree sum of its values.
__global__ void GlobalAveragePoolKernel(const float* x, int64_t planes, int64_t size, float* y) {
  __shared__ float partial[kThreads];
  for (int64_t p = blockIdx.x; p < planes; p += gridDim.x) {
    float sum = 0.f;
    for (int64_t i = threadIdx.x; i < size; i += blockDim.x) sum += x[p * size + i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
      __syncthreads();
    }
    if (threadIdx.x == 0) y[p] = size == 0 ? 0.f : partial[0] / static_cast<float>(size);
    __syncthreads();  // `partial` is reused by the next plane
  }
}

__global__ void GlobalAveragePoolBackwardKernel(const float* dy, int64_t size, float* dx,
                                                int64_t n) {
  TS_GRID_LOOP(j, n) { dx[j] = dy == nullptr ? 0.f : dy[j / size] / static_cast<float>(size); }
}

}  // namespace

cudaError_t LaunchMaxPool(const float* x, const PoolGeometry& g, float* y, int32_t* arg,
                          cudaStream_t stream) {
  const int64_t n = g.planes * g.out_size;
  if (n == 0) return cudaSuccess;
  MaxPoolKernel<<<Blocks(n), kThreads, 0, stream>>>(x, g, y, arg, n);
  return cudaGetLastError();
}

cudaError_t LaunchMaxPoolBackward(const int32_t* arg, const float* dy, const PoolGeometry& g,
                                  float* dx, cudaStream_t stream) {
  const int64_t n = g.planes * g.out_size;
  if (n == 0) return cudaSuccess;
  MaxPoolBackwardKernel<<<Blocks(n), kThreads, 0, stream>>>(arg, dy, g, dx, n);
  return cudaGetLastError();
}

cudaError_t LaunchAveragePool(const float* x, const PoolGeometry& g, bool count_include_pad,
                              float* y, cudaStream_t stream) {
  const int64_t n = g.planes * g.out_size;
  if (n == 0) return cudaSuccess;
  AveragePoolKernel<<<Blocks(n), kThreads, 0, stream>>>(x, g, count_include_pad, y, n);
  return cudaGetLastError();
}

cudaError_t LaunchAveragePoolBackward(const float* dy, const PoolGeometry& g,
                                      bool count_include_pad, float* dx, cudaStream_t stream) {
  const int64_t n = g.planes * g.out_size;
  if (n == 0) return cudaSuccess;
  AveragePoolBackwardKernel<<<Blocks(n), kThreads, 0, stream>>>(dy, g, count_include_pad, dx, n);
  return cudaGetLastError();
}

cudaError_t LaunchGlobalAveragePool(const float* x, int64_t planes, int64_t size, float* y,
                                    cudaStream_t stream) {
  if (planes == 0) return cudaSuccess;
  const int blocks = static_cast<int>(planes < 65535 ? planes : 65535);
  GlobalAveragePoolKernel<<<blocks, kThreads, 0, stream>>>(x, planes, size, y);
  return cudaGetLastError();
}

cudaError_t LaunchGlobalAveragePoolBackward(const float* dy, int64_t planes, int64_t size,
                                            float* dx, cudaStream_t stream) {
  const int64_t n = planes * size;
  if (n == 0) return cudaSuccess;
  GlobalAveragePoolBackwardKernel<<<Blocks(n), kThreads, 0, stream>>>(dy, size, dx, n);
  return cudaGetLastError();
}

}  // namespace tessera::exec::cuda
