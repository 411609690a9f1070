// LSTM kernels (recurrent_launch.h): bias add, state load/store, the fused cell forward and
// backward of one time step, and the bias gradient. One thread per (row, hidden unit): simple
// and obviously correct rather than fast; the matrix products are cuBLAS calls in lstm_ops.cc.
#include "tessera/exec/cuda/device_util.cuh"
#include "tessera/exec/cuda/recurrent_launch.h"

namespace tessera::exec::cuda {
namespace {

// The index helpers of the CPU kernel (exec/cpu/kernels_recurrent.cc, struct Lstm).
__device__ inline int64_t XRow(const LstmGeometry& g, int64_t time, int64_t row) {
  return g.layout == 0 ? time * g.b + row : row * g.t + time;
}
__device__ inline int64_t YOffset(const LstmGeometry& g, int64_t time, int64_t d, int64_t row) {
  return (g.layout == 0 ? (time * g.dirs + d) * g.b + row : (row * g.t + time) * g.dirs + d) *
         g.h;
}
__device__ inline int64_t StateOffset(const LstmGeometry& g, int64_t d, int64_t row) {
  return (g.layout == 0 ? d * g.b + row : row * g.dirs + d) * g.h;
}
// The time step direction d visits at step k for `row`, or -1 when the row's sequence is over.
__device__ inline int64_t Time(const LstmGeometry& g, int64_t d, int64_t k, int64_t row,
                               const int64_t* lens) {
  const int64_t len = lens[row];
  if (k >= len) return -1;
  const bool reverse = g.reverse_first || d == 1;
  return reverse ? len - 1 - k : k;
}

__device__ inline float Sigmoid(float x) { return 1.f / (1.f + expf(-x)); }

__global__ void AddBiasKernel(float* xw, const float* bias, int64_t rows, int64_t g) {
  TS_GRID_LOOP(i, rows * g) {
    const int64_t j = i % g;
    xw[i] += bias[j] + bias[g + j];
  }
}

__global__ void LoadStateKernel(const float* src, LstmGeometry geo, int64_t d, float* dst) {
  TS_GRID_LOOP(i, geo.b * geo.h) {
    const int64_t row = i / geo.h, j = i % geo.h;
    dst[i] = src == nullptr ? 0.f : src[StateOffset(geo, d, row) + j];
  }
}

__global__ void StoreStateKernel(const float* src, LstmGeometry geo, int64_t d, float* dst) {
  TS_GRID_LOOP(i, geo.b * geo.h) {
    const int64_t row = i / geo.h, j = i % geo.h;
    dst[StateOffset(geo, d, row) + j] = src[i];
  }
}

// Gate q of unit j of a row lives at q * H + j of the row's 4H values (order i, o, f, c).
__global__ void CellForwardKernel(LstmGeometry geo, int64_t d, int64_t k, const int64_t* lens,
                                  const float* xw, const float* pre, float* h, float* c, float* y,
                                  float* gates_k, float* cells_k) {
  const int64_t H = geo.h, G = 4 * geo.h;
  TS_GRID_LOOP(idx, geo.b * H) {
    const int64_t row = idx / H, j = idx % H;
    const int64_t time = Time(geo, d, k, row, lens);
    const float* p = pre + row * G;
    const float* x = time >= 0 ? xw + XRow(geo, time, row) * G : nullptr;
    const float zi = p[j] + (x ? x[j] : 0.f);
    const float zo = p[H + j] + (x ? x[H + j] : 0.f);
    const float zf = p[2 * H + j] + (x ? x[2 * H + j] : 0.f);
    const float zc = p[3 * H + j] + (x ? x[3 * H + j] : 0.f);
    const float gi = Sigmoid(zi), go = Sigmoid(zo), gf = Sigmoid(zf), gc = tanhf(zc);
    float* gate = gates_k + row * G;
    gate[j] = gi;
    gate[H + j] = go;
    gate[2 * H + j] = gf;
    gate[3 * H + j] = gc;
    if (time >= 0) {
      const float cell = gf * c[idx] + gi * gc;
      const float hidden = go * tanhf(cell);
      c[idx] = cell;
      h[idx] = hidden;
      y[YOffset(geo, time, d, row) + j] = hidden;
    }
    cells_k[idx] = c[idx];
  }
}

// The CPU kernel's CellBackward for one unit of one row:
//   dct = dc + dh o (1 - tanh(c)^2)
//   dG = [dct g i(1-i), dh tanh(c) o(1-o), dct c_prev f(1-f), dct i (1-g^2)];  dc = dct f.
__global__ void CellBackwardKernel(LstmGeometry geo, int64_t d, int64_t k, const int64_t* lens,
                                   const float* gates_k, const float* cells_k,
                                   const float* cells_prev, const float* dy, float* dh, float* dc,
                                   float* dg, float* dgate_all) {
  const int64_t H = geo.h, G = 4 * geo.h;
  TS_GRID_LOOP(idx, geo.b * H) {
    const int64_t row = idx / H, j = idx % H;
    const int64_t time = Time(geo, d, k, row, lens);
    float* dgr = dg + row * G;
    if (time < 0) {
      dgr[j] = dgr[H + j] = dgr[2 * H + j] = dgr[3 * H + j] = 0.f;
      continue;
    }
    float dhv = dh[idx];
    if (dy != nullptr) dhv += dy[YOffset(geo, time, d, row) + j];
    dh[idx] = dhv;
    const float* gate = gates_k + row * G;
    const float gi = gate[j], go = gate[H + j], gf = gate[2 * H + j], gc = gate[3 * H + j];
    const float tc = tanhf(cells_k[idx]);
    const float dct = dc[idx] + dhv * go * (1.f - tc * tc);
    dgr[j] = dct * gc * gi * (1.f - gi);
    dgr[H + j] = dhv * tc * go * (1.f - go);
    dgr[2 * H + j] = dct * cells_prev[idx] * gf * (1.f - gf);
    dgr[3 * H + j] = dct * gi * (1.f - gc * gc);
    dc[idx] = dct * gf;
    float* all = dgate_all + XRow(geo, time, row) * G;
    for (int q = 0; q < 4; ++q) all[q * H + j] = dgr[q * H + j];
  }
}

__global__ void PreviousHiddenKernel(LstmGeometry geo, int64_t d, int64_t k, const int64_t* lens,
                                     const float* y, const float* h0, float* h_prev) {
  TS_GRID_LOOP(idx, geo.b * geo.h) {
    const int64_t row = idx / geo.h, j = idx % geo.h;
    if (Time(geo, d, k, row, lens) < 0) {
      h_prev[idx] = 0.f;
    } else if (k == 0) {
      h_prev[idx] = h0[idx];
    } else {  // step k-1 is inside the sequence too, since k-1 < k < len
      h_prev[idx] = y[YOffset(geo, Time(geo, d, k - 1, row, lens), d, row) + j];
    }
  }
}

__global__ void ActiveRowsCopyKernel(LstmGeometry geo, int64_t d, int64_t k, const int64_t* lens,
                                     const float* src, float* dst) {
  TS_GRID_LOOP(idx, geo.b * geo.h) {
    if (Time(geo, d, k, idx / geo.h, lens) >= 0) dst[idx] = src[idx];
  }
}

// One thread per gate column: sums it over the rows in a fixed order.
__global__ void BiasGradKernel(const float* dgate_all, int64_t rows, int64_t g, float* db) {
  TS_GRID_LOOP(j, g) {
    float s = 0.f;
    for (int64_t r = 0; r < rows; ++r) s += dgate_all[r * g + j];
    db[j] = s;
    db[g + j] = s;
  }
}

}  // namespace

cudaError_t LaunchLstmAddBias(float* xw, const float* bias, int64_t rows, int64_t g,
                              cudaStream_t stream) {
  AddBiasKernel<<<Blocks(rows * g), kThreads, 0, stream>>>(xw, bias, rows, g);
  return cudaGetLastError();
}

cudaError_t LaunchLstmLoadState(const float* src, LstmGeometry geo, int64_t d, float* dst,
                                cudaStream_t stream) {
  LoadStateKernel<<<Blocks(geo.b * geo.h), kThreads, 0, stream>>>(src, geo, d, dst);
  return cudaGetLastError();
}

cudaError_t LaunchLstmStoreState(const float* src, LstmGeometry geo, int64_t d, float* dst,
                                 cudaStream_t stream) {
  StoreStateKernel<<<Blocks(geo.b * geo.h), kThreads, 0, stream>>>(src, geo, d, dst);
  return cudaGetLastError();
}

cudaError_t LaunchLstmCellForward(LstmGeometry geo, int64_t d, int64_t k, const int64_t* lens,
                                  const float* xw, const float* pre, float* h, float* c,
                                  float* y, float* gates_k, float* cells_k, cudaStream_t stream) {
  CellForwardKernel<<<Blocks(geo.b * geo.h), kThreads, 0, stream>>>(geo, d, k, lens, xw, pre, h,
                                                                     c, y, gates_k, cells_k);
  return cudaGetLastError();
}

cudaError_t LaunchLstmCellBackward(LstmGeometry geo, int64_t d, int64_t k, const int64_t* lens,
                                   const float* gates_k, const float* cells_k,
                                   const float* cells_prev, const float* dy, float* dh, float* dc,
                                   float* dg, float* dgate_all, cudaStream_t stream) {
  CellBackwardKernel<<<Blocks(geo.b * geo.h), kThreads, 0, stream>>>(
      geo, d, k, lens, gates_k, cells_k, cells_prev, dy, dh, dc, dg, dgate_all);
  return cudaGetLastError();
}

cudaError_t LaunchLstmPreviousHidden(LstmGeometry geo, int64_t d, int64_t k, const int64_t* lens,
                                     const float* y, const float* h0, float* h_prev,
                                     cudaStream_t stream) {
  PreviousHiddenKernel<<<Blocks(geo.b * geo.h), kThreads, 0, stream>>>(geo, d, k, lens, y, h0,
                                                                       h_prev);
  return cudaGetLastError();
}

cudaError_t LaunchLstmActiveRowsCopy(LstmGeometry geo, int64_t d, int64_t k, const int64_t* lens,
                                     const float* src, float* dst, cudaStream_t stream) {
  ActiveRowsCopyKernel<<<Blocks(geo.b * geo.h), kThreads, 0, stream>>>(geo, d, k, lens, src, dst);
  return cudaGetLastError();
}

cudaError_t LaunchLstmBiasGrad(const float* dgate_all, int64_t rows, int64_t g, float* db,
                               cudaStream_t stream) {
  BiasGradKernel<<<Blocks(g), kThreads, 0, stream>>>(dgate_all, rows, g, db);
  return cudaGetLastError();
}

}  // namespace tessera::exec::cuda
