// The CUDA back-end's element-wise kernels (backend_kernels_impl.h): fill, accumulate, scale,
// the optimizer's update, BatchNormalization's running statistics, and the sum of squares with
// the finiteness test of Backend::Inspect. Grid-stride loops of kThreads threads (device_util).
#include "tessera/exec/cuda/backend_kernels_impl.h"
#include "tessera/exec/cuda/device_util.cuh"

namespace tessera::exec::cuda {
namespace {

// The reduction's grid: enough blocks to fill an H100 (132 SMs x 8 blocks of 256 threads), few
// enough that one double atomicAdd per block on the same address stays cheap.
constexpr int kMaxReduceBlocks = 1024;
constexpr int kWarp = 32;

__global__ void FillKernel(float* x, int64_t n, float value) {
  TS_GRID_LOOP(i, n) { x[i] = value; }
}

__global__ void AccumulateKernel(float* __restrict__ dst, const float* __restrict__ src,
                                 int64_t n) {
  TS_GRID_LOOP(i, n) { dst[i] += src[i]; }
}

__global__ void ScaleKernel(float* x, int64_t n, float factor) {
  TS_GRID_LOOP(i, n) { x[i] *= factor; }
}

// The update rules are written with the round-to-nearest intrinsics so that every operation of
// cpu_update.cc is one rounded float operation here too: nvcc would otherwise contract a * b + c
// into a fused multiply-add (--fmad=true), which rounds once instead of twice. (The host
// compiler may contract the CPU loops the same way; -ffp-contract=off on cpu_update.cc makes
// the two back-ends agree bit for bit.) __fdiv_rn and __fsqrt_rn are IEEE-rounded, as the
// host's / and std::sqrt, even under --use_fast_math.
__device__ __forceinline__ float Mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float Add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float Sub(float a, float b) { return __fsub_rn(a, b); }

// SGD: w -= lr * (g + wd * w).
__global__ void SgdKernel(UpdateConstants c, float* __restrict__ w, const float* __restrict__ g,
                          int64_t n) {
  TS_GRID_LOOP(i, n) {
    const float wi = w[i];
    w[i] = Sub(wi, Mul(c.lr, Add(g[i], Mul(c.weight_decay, wi))));
  }
}

// Momentum: v = mu * v + (g + wd * w); w -= lr * v.
__global__ void MomentumKernel(UpdateConstants c, float* __restrict__ w,
                               const float* __restrict__ g, float* __restrict__ v, int64_t n) {
  TS_GRID_LOOP(i, n) {
    const float wi = w[i];
    const float vi = Add(Mul(c.momentum, v[i]), Add(g[i], Mul(c.weight_decay, wi)));
    v[i] = vi;
    w[i] = Sub(wi, Mul(c.lr, vi));
  }
}

// AdamW: m = b1 m + (1-b1) g; v = b2 v + (1-b2) (g g);
// w -= step_size * m / (sqrt(v) * inv_sqrt_c2 + eps) + decay * w   (torch's order).
__global__ void AdamWKernel(UpdateConstants c, float* __restrict__ w, const float* __restrict__ g,
                            float* __restrict__ m, float* __restrict__ v, int64_t n) {
  TS_GRID_LOOP(i, n) {
    const float gi = g[i], wi = w[i];
    const float mi = Add(Mul(c.beta1, m[i]), Mul(c.one_minus_beta1, gi));
    const float vi = Add(Mul(c.beta2, v[i]), Mul(c.one_minus_beta2, Mul(gi, gi)));
    m[i] = mi;
    v[i] = vi;
    const float denom = Add(Mul(__fsqrt_rn(vi), c.inv_sqrt_c2), c.epsilon);
    w[i] = Sub(wi, Add(__fdiv_rn(Mul(c.step_size, mi), denom), Mul(c.decay, wi)));
  }
}

__global__ void RunningStatisticKernel(float* running, const float* batch, int64_t channels,
                                       double momentum) {
  TS_GRID_LOOP(c, channels) {
    running[c] = static_cast<float>(momentum * running[c] + (1 - momentum) * batch[c]);
  }
}

// Sum of a double over the warp, in lane 0.
__device__ double WarpSum(double v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  return v;
}

// Step 1: each thread sums the squares of its grid-stride share in double and notes whether it
// saw an exponent of all ones (an infinity or a NaN). Step 2: the block sums the threads'
// partial sums (warp shuffles, then the warps' sums through shared memory) and ORs the flags.
// Step 3: thread 0 adds the block's sum to *sum (double atomicAdd, sm_60+) and raises the flag.
// Every thread leaves the grid-stride loop before the shuffles, so the full-warp masks hold.
__global__ void SumSquaresKernel(const float* x, int64_t n, double* sum,
                                 unsigned int* nonfinite) {
  __shared__ double warp_sums[kThreads / kWarp];
  double local = 0;
  int bad = 0;
  TS_GRID_LOOP(i, n) {
    const float v = x[i];
    local += static_cast<double>(v) * v;
    bad |= (__float_as_uint(v) & 0x7f800000u) == 0x7f800000u;
  }
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  local = WarpSum(local);
  if (lane == 0) warp_sums[warp] = local;
  bad = __syncthreads_or(bad);  // also the barrier that publishes warp_sums
  if (warp != 0) return;
  local = WarpSum(lane < kThreads / kWarp ? warp_sums[lane] : 0.0);
  if (lane != 0) return;
  if (sum != nullptr) atomicAdd(sum, local);
  if (bad != 0) atomicOr(nonfinite, 1u);
}

}  // namespace

cudaError_t LaunchFillValue(float* x, int64_t n, float value, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  FillKernel<<<Blocks(n), kThreads, 0, stream>>>(x, n, value);
  return cudaGetLastError();
}

cudaError_t LaunchAccumulate(float* dst, const float* src, int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  AccumulateKernel<<<Blocks(n), kThreads, 0, stream>>>(dst, src, n);
  return cudaGetLastError();
}

cudaError_t LaunchScale(float* x, int64_t n, float factor, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  ScaleKernel<<<Blocks(n), kThreads, 0, stream>>>(x, n, factor);
  return cudaGetLastError();
}

cudaError_t LaunchUpdate(const UpdateConstants& c, float* w, const float* g, float* s0, float* s1,
                         int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  switch (c.kind) {
    case UpdateKind::kSgd:
      SgdKernel<<<Blocks(n), kThreads, 0, stream>>>(c, w, g, n);
      break;
    case UpdateKind::kMomentum:
      MomentumKernel<<<Blocks(n), kThreads, 0, stream>>>(c, w, g, s0, n);
      break;
    case UpdateKind::kAdamW:
      AdamWKernel<<<Blocks(n), kThreads, 0, stream>>>(c, w, g, s0, s1, n);
      break;
  }
  return cudaGetLastError();
}

cudaError_t LaunchRunningStatistic(float* running, const float* batch, int64_t channels,
                                   double momentum, cudaStream_t stream) {
  if (channels <= 0) return cudaSuccess;
  RunningStatisticKernel<<<Blocks(channels), kThreads, 0, stream>>>(running, batch, channels,
                                                                    momentum);
  return cudaGetLastError();
}

cudaError_t LaunchSumSquares(const float* x, int64_t n, double* sum, unsigned int* nonfinite,
                             cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const int blocks = Blocks(n) < kMaxReduceBlocks ? Blocks(n) : kMaxReduceBlocks;
  SumSquaresKernel<<<blocks, kThreads, 0, stream>>>(x, n, sum, nonfinite);
  return cudaGetLastError();
}

}  // namespace tessera::exec::cuda
