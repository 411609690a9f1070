// CtcLoss kernels (recurrent_launch.h): the log-space alpha and beta recursions of the CPU kernel
// (exec/cpu/kernels_loss.cc) in float64, one block per sample, the block's threads over the
// lattice states u, one __syncthreads() per time step. The gradient is one thread per (t, u)
// where u is the first state of its class: it sums alpha + beta over that class's states in
// increasing u, the CPU kernel's order.
#include <math_constants.h>

#include "tessera/exec/cuda/device_util.cuh"
#include "tessera/exec/cuda/recurrent_launch.h"

namespace tessera::exec::cuda {
namespace {

constexpr int kCtcThreads = 256;

__device__ inline double NegInf() { return -CUDART_INF; }

// log(exp(a) + exp(b)), exactly the CPU kernel's LogAdd.
__device__ inline double LogAdd(double a, double b) {
  if (a == NegInf()) return b;
  if (b == NegInf()) return a;
  const double m = fmax(a, b);
  return m + log1p(exp(-fabs(a - b)));
}

// May state u take the skip transition from u - 2 (a label differing from the previous one)?
__device__ inline bool CanSkip(const int64_t* ext, int64_t u, int64_t blank) {
  return u >= 2 && ext[u] != blank && ext[u] != ext[u - 2];
}

__device__ inline double Emit(const float* lp, const CtcLattice& lat, const int64_t* ext,
                              int64_t b, int64_t t, int64_t u) {
  return static_cast<double>(lp[(t * lat.n + b) * lat.c + ext[u]]);
}

// Block b: alpha of sample b. Every branch that returns early does so for the whole block
// (frames and states are per sample), so the __syncthreads() calls are reached by all threads.
__global__ void CtcAlphaKernel(const float* lp, CtcLattice lat, double* alpha, double* log_p) {
  const int64_t b = blockIdx.x;
  const int64_t frames = lat.frames[b], states = lat.states[b];
  const int64_t* ext = lat.ext + b * lat.u_max;
  double* al = alpha + b * lat.t_max * lat.u_max;
  for (int64_t i = threadIdx.x; i < lat.t_max * lat.u_max; i += blockDim.x) al[i] = NegInf();
  __syncthreads();
  if (frames == 0) {
    if (threadIdx.x == 0) log_p[b] = states == 1 ? 0.0 : NegInf();
    return;
  }
  // Step 0: only the leading blank and the first label can start an alignment.
  for (int64_t u = threadIdx.x; u < states && u < 2; u += blockDim.x) al[u] = Emit(lp, lat, ext, b, 0, u);
  __syncthreads();
  for (int64_t t = 1; t < frames; ++t) {
    const double* prev = al + (t - 1) * lat.u_max;
    double* cur = al + t * lat.u_max;
    for (int64_t u = threadIdx.x; u < states; u += blockDim.x) {
      double v = prev[u];
      if (u >= 1) v = LogAdd(v, prev[u - 1]);
      if (CanSkip(ext, u, lat.blank)) v = LogAdd(v, prev[u - 2]);
      cur[u] = v == NegInf() ? NegInf() : v + Emit(lp, lat, ext, b, t, u);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const double* last = al + (frames - 1) * lat.u_max;
    log_p[b] = states > 1 ? LogAdd(last[states - 1], last[states - 2]) : last[0];
  }
}

// Block b: beta of sample b into `beta`, then its gradient into dlp (zeroed by the caller).
__global__ void CtcBackwardKernel(const float* lp, CtcLattice lat, const double* alpha,
                                  const double* log_p, const double* scale, double* beta,
                                  float* dlp) {
  const int64_t b = blockIdx.x;
  const int64_t frames = lat.frames[b], states = lat.states[b];
  if (log_p[b] == NegInf() || frames == 0) return;  // infeasible sample or no frame: no gradient
  const int64_t* ext = lat.ext + b * lat.u_max;
  const double* al = alpha + b * lat.t_max * lat.u_max;
  double* be = beta + b * lat.t_max * lat.u_max;
  for (int64_t i = threadIdx.x; i < lat.t_max * lat.u_max; i += blockDim.x) be[i] = NegInf();
  __syncthreads();
  // The last frame: only the final label and the trailing blank can end an alignment.
  double* last = be + (frames - 1) * lat.u_max;
  for (int64_t u = threadIdx.x; u < states; u += blockDim.x) {
    if (u >= states - 2) last[u] = Emit(lp, lat, ext, b, frames - 1, u);
  }
  __syncthreads();
  for (int64_t t = frames - 2; t >= 0; --t) {
    const double* next = be + (t + 1) * lat.u_max;
    double* cur = be + t * lat.u_max;
    for (int64_t u = threadIdx.x; u < states; u += blockDim.x) {
      double v = next[u];
      if (u + 1 < states) v = LogAdd(v, next[u + 1]);
      if (u + 2 < states && CanSkip(ext, u + 2, lat.blank)) v = LogAdd(v, next[u + 2]);
      cur[u] = v == NegInf() ? NegInf() : v + Emit(lp, lat, ext, b, t, u);
    }
    __syncthreads();
  }
  // alpha_t(u) + beta_t(u) counts the emission at t twice: subtract lp once more.
  const double g = scale[b], lpb = log_p[b];
  for (int64_t i = threadIdx.x; i < frames * states; i += blockDim.x) {
    const int64_t t = i / states, u = i % states;
    const int64_t cls = ext[u];
    bool first = true;
    for (int64_t v = 0; v < u && first; ++v) first = ext[v] != cls;
    if (!first) continue;
    double sum = NegInf();
    for (int64_t v = u; v < states; ++v) {
      if (ext[v] == cls) sum = LogAdd(sum, al[t * lat.u_max + v] + be[t * lat.u_max + v]);
    }
    if (sum == NegInf()) continue;
    const int64_t at = (t * lat.n + b) * lat.c + cls;
    dlp[at] = static_cast<float>(-g * exp(sum - static_cast<double>(lp[at]) - lpb));
  }
}

}  // namespace

cudaError_t LaunchCtcAlpha(const float* log_probs, CtcLattice lat, double* alpha, double* log_p,
                           cudaStream_t stream) {
  if (lat.n == 0) return cudaGetLastError();
  CtcAlphaKernel<<<static_cast<unsigned>(lat.n), kCtcThreads, 0, stream>>>(log_probs, lat, alpha,
                                                                           log_p);
  return cudaGetLastError();
}

cudaError_t LaunchCtcBackward(const float* log_probs, CtcLattice lat, const double* alpha,
                              const double* log_p, const double* scale, double* beta,
                              float* dlog_probs, cudaStream_t stream) {
  if (lat.n == 0) return cudaGetLastError();
  CtcBackwardKernel<<<static_cast<unsigned>(lat.n), kCtcThreads, 0, stream>>>(
      log_probs, lat, alpha, log_p, scale, beta, dlog_probs);
  return cudaGetLastError();
}

}  // namespace tessera::exec::cuda
