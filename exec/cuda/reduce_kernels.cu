// Reductions, Softmax/LogSoftmax, Pad, Gather, SoftmaxCrossEntropy and LayerNorm kernels. Simple
// one-thread-per-output loops (obviously correct rather than fast); see launch.h.
#include <cfloat>
#include <cmath>

#include "tessera/exec/cuda/device_util.cuh"

namespace tessera::exec::cuda {
namespace {

struct Axes {
  int r[kMaxRank];
};

// One thread per output element: loops over the reduced axes of x[in].
__global__ void ReduceKernel(ReduceCode op, const float* x, Dims in, Axes red, float* y,
                             int64_t n_out, int64_t count) {
  TS_GRID_LOOP(o, n_out) {
    int64_t idx[kMaxRank];
    int64_t rest = o;
    for (int d = in.rank - 1; d >= 0; --d) {
      const int64_t dim = red.r[d] ? 1 : in.d[d];
      idx[d] = rest % dim;
      rest /= dim;
    }
    float acc = op == ReduceCode::kMax ? -FLT_MAX : 0.f;
    for (int64_t r = 0; r < count; ++r) {
      int64_t rr = r, off = 0, stride = 1;
      for (int d = in.rank - 1; d >= 0; --d) {
        int64_t i = idx[d];
        if (red.r[d]) {
          i = rr % in.d[d];
          rr /= in.d[d];
        }
        off += i * stride;
        stride *= in.d[d];
      }
      acc = op == ReduceCode::kMax ? fmaxf(acc, x[off]) : acc + x[off];
    }
    y[o] = op == ReduceCode::kMean ? acc / static_cast<float>(count) : acc;
  }
}

__global__ void ReduceBackwardKernel(ReduceCode op, const float* x, const float* y,
                                     const float* dy, Dims in, Axes red, float* dx, int64_t n,
                                     int64_t count) {
  TS_GRID_LOOP(i, n) {
    int64_t rest = i, o = 0, stride = 1;
    for (int d = in.rank - 1; d >= 0; --d) {
      const int64_t k = rest % in.d[d];
      rest /= in.d[d];
      if (!red.r[d]) {
        o += k * stride;
        stride *= in.d[d];
      }
    }
    float g = dy[o];
    if (op == ReduceCode::kMean) g /= static_cast<float>(count);
    if (op == ReduceCode::kMax) g = x[i] == y[o] ? g : 0.f;
    dx[i] = g;
  }
}

// One thread per (outer, inner) row along the axis.
__global__ void SoftmaxKernel(const float* x, float* y, int64_t outer, int64_t axis,
                              int64_t inner, bool log) {
  TS_GRID_LOOP(row, outer * inner) {
    const int64_t base = (row / inner) * axis * inner + row % inner;
    float m = -FLT_MAX;
    for (int64_t k = 0; k < axis; ++k) m = fmaxf(m, x[base + k * inner]);
    float sum = 0.f;
    for (int64_t k = 0; k < axis; ++k) sum += expf(x[base + k * inner] - m);
    const float log_sum = logf(sum);
    for (int64_t k = 0; k < axis; ++k) {
      const float z = x[base + k * inner] - m;
      y[base + k * inner] = log ? z - log_sum : expf(z) / sum;
    }
  }
}

// Softmax: dx = y (dy - sum(dy y)); LogSoftmax: dx = dy - exp(y) sum(dy).
__global__ void SoftmaxBackwardKernel(const float* y, const float* dy, float* dx, int64_t outer,
                                      int64_t axis, int64_t inner, bool log) {
  TS_GRID_LOOP(row, outer * inner) {
    const int64_t base = (row / inner) * axis * inner + row % inner;
    float dot = 0.f;
    for (int64_t k = 0; k < axis; ++k) {
      const int64_t j = base + k * inner;
      dot += log ? dy[j] : dy[j] * y[j];
    }
    for (int64_t k = 0; k < axis; ++k) {
      const int64_t j = base + k * inner;
      dx[j] = log ? dy[j] - expf(y[j]) * dot : y[j] * (dy[j] - dot);
    }
  }
}

struct Pads {
  int64_t p[kMaxRank];
};

// Source index of output index o along an axis of size dim; -1 for a constant pad.
__device__ int64_t PadSource(PadCode mode, int64_t o, int64_t pad, int64_t dim) {
  int64_t i = o - pad;
  if (i >= 0 && i < dim) return i;
  if (mode == PadCode::kConstant) return -1;
  const int64_t period = 2 * (dim - 1);
  if (mode == PadCode::kEdge || period == 0) return i < 0 ? 0 : dim - 1;
  i = ((i % period) + period) % period;
  return i >= dim ? period - i : i;
}

// Offset in x of output element o, or -1 when it reads the constant.
__device__ int64_t PadOffset(PadCode mode, int64_t o, Dims in, Dims out, const Pads& pads) {
  int64_t off = 0, stride = 1;
  for (int d = out.rank - 1; d >= 0; --d) {
    const int64_t k = o % out.d[d];
    o /= out.d[d];
    const int64_t i = PadSource(mode, k, pads.p[d], in.d[d]);
    if (i < 0) return -1;
    off += i * stride;
    stride *= in.d[d];
  }
  return off;
}

__global__ void PadKernel(PadCode mode, const float* x, Dims in, float* y, Dims out, Pads pads,
                          float value, int64_t n) {
  TS_GRID_LOOP(o, n) {
    const int64_t off = PadOffset(mode, o, in, out, pads);
    y[o] = off < 0 ? value : x[off];
  }
}

__global__ void PadBackwardKernel(PadCode mode, const float* dy, Dims out, float* dx, Dims in,
                                  Pads pads, int64_t n) {
  TS_GRID_LOOP(o, n) {
    const int64_t off = PadOffset(mode, o, in, out, pads);
    if (off >= 0) atomicAdd(dx + off, dy[o]);
  }
}

__global__ void GatherKernel(const float* data, int64_t axis, int64_t inner, const int64_t* idx,
                             int64_t num_idx, float* y, int64_t n) {
  TS_GRID_LOOP(j, n) {
    const int64_t i = j % inner, k = (j / inner) % num_idx, o = j / (inner * num_idx);
    y[j] = data[(o * axis + idx[k]) * inner + i];
  }
}

__global__ void GatherBackwardKernel(const float* dy, int64_t axis, int64_t inner,
                                     const int64_t* idx, int64_t num_idx, float* ddata,
                                     int64_t n) {
  TS_GRID_LOOP(j, n) {
    const int64_t i = j % inner, k = (j / inner) % num_idx, o = j / (inner * num_idx);
    atomicAdd(ddata + (o * axis + idx[k]) * inner + i, dy[j]);
  }
}

__global__ void SoftmaxXentKernel(const float* logits, const int64_t* labels, int64_t classes,
                                  int64_t inner, int64_t n, float* probs, float* losses) {
  TS_GRID_LOOP(pos, n) {
    const int64_t base = (pos / inner) * classes * inner + pos % inner;
    float m = -FLT_MAX;
    for (int64_t c = 0; c < classes; ++c) m = fmaxf(m, logits[base + c * inner]);
    float sum = 0.f;
    for (int64_t c = 0; c < classes; ++c) sum += expf(logits[base + c * inner] - m);
    for (int64_t c = 0; c < classes; ++c) {
      probs[base + c * inner] = expf(logits[base + c * inner] - m) / sum;
    }
    const int64_t label = labels[pos];
    losses[pos] = label < 0 ? 0.f : m + logf(sum) - logits[base + label * inner];
  }
}

__global__ void SoftmaxXentBackwardKernel(const float* probs, const int64_t* labels,
                                          int64_t classes, int64_t inner, int64_t n,
                                          const float* dy, bool per_position, float scale,
                                          float* dlogits) {
  TS_GRID_LOOP(pos, n) {
    const int64_t base = (pos / inner) * classes * inner + pos % inner;
    const int64_t label = labels[pos];
    const float g = label < 0 ? 0.f : (per_position ? dy[pos] : dy[0]) * scale;
    for (int64_t c = 0; c < classes; ++c) {
      const int64_t j = base + c * inner;
      dlogits[j] = (probs[j] - (c == label ? 1.f : 0.f)) * g;
    }
  }
}

// A single block sums x (deterministic, fine for loss vectors).
__global__ void SumAllKernel(const float* x, int64_t n, float scale, float* y) {
  __shared__ float partial[kThreads];
  float acc = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) acc += x[i];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[0] = partial[0] * scale;
}

__global__ void LayerNormKernel(const float* x, const float* scale, const float* bias,
                                int64_t rows, int64_t cols, float eps, float* y, float* mean,
                                float* inv) {
  TS_GRID_LOOP(r, rows) {
    const float* xr = x + r * cols;
    double sum = 0.0, sq = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum += xr[c];
    const double mu = sum / cols;
    for (int64_t c = 0; c < cols; ++c) sq += (xr[c] - mu) * (xr[c] - mu);
    const float iv = static_cast<float>(1.0 / sqrt(sq / cols + eps));
    mean[r] = static_cast<float>(mu);
    inv[r] = iv;
    for (int64_t c = 0; c < cols; ++c) {
      const float xhat = (xr[c] - static_cast<float>(mu)) * iv;
      y[r * cols + c] = xhat * scale[c] + (bias != nullptr ? bias[c] : 0.f);
    }
  }
}

// dx = inv (g - mean(g) - xhat mean(g xhat)), g = dy * scale.
__global__ void LayerNormDxKernel(const float* x, const float* scale, const float* dy,
                                  const float* mean, const float* inv, int64_t rows,
                                  int64_t cols, float* dx) {
  TS_GRID_LOOP(r, rows) {
    float sg = 0.f, sgx = 0.f;
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t j = r * cols + c;
      const float g = dy[j] * scale[c], xhat = (x[j] - mean[r]) * inv[r];
      sg += g;
      sgx += g * xhat;
    }
    sg /= cols;
    sgx /= cols;
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t j = r * cols + c;
      const float xhat = (x[j] - mean[r]) * inv[r];
      dx[j] = inv[r] * (dy[j] * scale[c] - sg - xhat * sgx);
    }
  }
}

__global__ void LayerNormParamKernel(const float* x, const float* dy, const float* mean,
                                     const float* inv, int64_t rows, int64_t cols,
                                     float* dscale, float* dbias) {
  TS_GRID_LOOP(c, cols) {
    float ds = 0.f, db = 0.f;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t j = r * cols + c;
      ds += dy[j] * (x[j] - mean[r]) * inv[r];
      db += dy[j];
    }
    if (dscale != nullptr) dscale[c] = ds;
    if (dbias != nullptr) dbias[c] = db;
  }
}

Axes ToAxes(const Dims& in, const int* reduced, int64_t* count) {
  Axes a{};
  *count = 1;
  for (int d = 0; d < in.rank; ++d) {
    a.r[d] = reduced[d];
    if (reduced[d]) *count *= in.d[d];
  }
  return a;
}

Pads ToPads(int rank, const int64_t* pads_begin) {
  Pads p{};
  for (int d = 0; d < rank; ++d) p.p[d] = pads_begin[d];
  return p;
}

}  // namespace

cudaError_t LaunchReduce(ReduceCode op, const float* x, Dims in, const int* reduced, float* y,
                         cudaStream_t stream) {
  int64_t count = 1;
  const Axes red = ToAxes(in, reduced, &count);
  const int64_t n_out = count == 0 ? 0 : Count(in) / count;
  if (n_out == 0) return cudaSuccess;
  ReduceKernel<<<Blocks(n_out), kThreads, 0, stream>>>(op, x, in, red, y, n_out, count);
  return cudaGetLastError();
}

cudaError_t LaunchReduceBackward(ReduceCode op, const float* x, const float* y, const float* dy,
                                 Dims in, const int* reduced, float* dx, cudaStream_t stream) {
  int64_t count = 1;
  const Axes red = ToAxes(in, reduced, &count);
  const int64_t n = Count(in);
  if (n == 0) return cudaSuccess;
  ReduceBackwardKernel<<<Blocks(n), kThreads, 0, stream>>>(op, x, y, dy, in, red, dx, n, count);
  return cudaGetLastError();
}

cudaError_t LaunchSoftmax(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner,
                          bool log, cudaStream_t stream) {
  SoftmaxKernel<<<Blocks(outer * inner), kThreads, 0, stream>>>(x, y, outer, axis, inner, log);
  return cudaGetLastError();
}

cudaError_t LaunchSoftmaxBackward(const float* y, const float* dy, float* dx, int64_t outer,
                                  int64_t axis, int64_t inner, bool log, cudaStream_t stream) {
  SoftmaxBackwardKernel<<<Blocks(outer * inner), kThreads, 0, stream>>>(y, dy, dx, outer, axis,
                                                                        inner, log);
  return cudaGetLastError();
}

cudaError_t LaunchPad(PadCode mode, const float* x, Dims in, float* y, Dims out,
                      const int64_t* pads_begin, float value, cudaStream_t stream) {
  const int64_t n = Count(out);
  if (n == 0) return cudaSuccess;
  PadKernel<<<Blocks(n), kThreads, 0, stream>>>(mode, x, in, y, out,
                                                ToPads(out.rank, pads_begin), value, n);
  return cudaGetLastError();
}

cudaError_t LaunchPadBackward(PadCode mode, const float* dy, Dims out, float* dx, Dims in,
                              const int64_t* pads_begin, cudaStream_t stream) {
  const int64_t n = Count(out);
  if (n == 0) return cudaSuccess;
  PadBackwardKernel<<<Blocks(n), kThreads, 0, stream>>>(mode, dy, out, dx, in,
                                                        ToPads(out.rank, pads_begin), n);
  return cudaGetLastError();
}

cudaError_t LaunchGather(const float* data, int64_t outer, int64_t axis, int64_t inner,
                         const int64_t* idx, int64_t num_idx, float* y, cudaStream_t stream) {
  const int64_t n = outer * num_idx * inner;
  if (n == 0) return cudaSuccess;
  GatherKernel<<<Blocks(n), kThreads, 0, stream>>>(data, axis, inner, idx, num_idx, y, n);
  return cudaGetLastError();
}

cudaError_t LaunchGatherBackward(const float* dy, int64_t outer, int64_t axis, int64_t inner,
                                 const int64_t* idx, int64_t num_idx, float* ddata,
                                 cudaStream_t stream) {
  const int64_t n = outer * num_idx * inner;
  if (n == 0) return cudaSuccess;
  GatherBackwardKernel<<<Blocks(n), kThreads, 0, stream>>>(dy, axis, inner, idx, num_idx, ddata,
                                                           n);
  return cudaGetLastError();
}

cudaError_t LaunchSoftmaxXent(const float* logits, const int64_t* labels, int64_t outer,
                              int64_t classes, int64_t inner, float* probs, float* losses,
                              cudaStream_t stream) {
  const int64_t n = outer * inner;
  if (n == 0) return cudaSuccess;
  SoftmaxXentKernel<<<Blocks(n), kThreads, 0, stream>>>(logits, labels, classes, inner, n, probs,
                                                        losses);
  return cudaGetLastError();
}

cudaError_t LaunchSoftmaxXentBackward(const float* probs, const int64_t* labels, int64_t outer,
                                      int64_t classes, int64_t inner, const float* dy,
                                      bool per_position, float scale, float* dlogits,
                                      cudaStream_t stream) {
  const int64_t n = outer * inner;
  if (n == 0) return cudaSuccess;
  SoftmaxXentBackwardKernel<<<Blocks(n), kThreads, 0, stream>>>(
      probs, labels, classes, inner, n, dy, per_position, scale, dlogits);
  return cudaGetLastError();
}

cudaError_t LaunchSumAll(const float* x, int64_t n, float scale, float* y, cudaStream_t stream) {
  SumAllKernel<<<1, kThreads, 0, stream>>>(x, n, scale, y);
  return cudaGetLastError();
}

cudaError_t LaunchLayerNorm(const float* x, const float* scale, const float* bias, int64_t rows,
                            int64_t cols, float eps, float* y, float* mean, float* inv,
                            cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  LayerNormKernel<<<Blocks(rows), kThreads, 0, stream>>>(x, scale, bias, rows, cols, eps, y, mean,
                                                         inv);
  return cudaGetLastError();
}

cudaError_t LaunchLayerNormBackward(const float* x, const float* scale, const float* dy,
                                    const float* mean, const float* inv, int64_t rows,
                                    int64_t cols, float* dx, float* dscale, float* dbias,
                                    cudaStream_t stream) {
  if (dx != nullptr && rows > 0) {
    LayerNormDxKernel<<<Blocks(rows), kThreads, 0, stream>>>(x, scale, dy, mean, inv, rows, cols,
                                                             dx);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  if ((dscale != nullptr || dbias != nullptr) && cols > 0) {
    LayerNormParamKernel<<<Blocks(cols), kThreads, 0, stream>>>(x, dy, mean, inv, rows, cols,
                                                                dscale, dbias);
  }
  return cudaGetLastError();
}

}  // namespace tessera::exec::cuda
