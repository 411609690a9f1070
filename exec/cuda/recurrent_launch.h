// Internal to the CUDA back-end: the launchers of the LSTM and CtcLoss kernels
// (lstm_kernels.cu, ctc_kernels.cu), called by lstm_ops.cc and ctc_ops.cc. Plain C++17 and CUDA
// types only, like launch.h; every launcher enqueues on `stream` and returns cudaGetLastError().
//
//   LstmGeometry geo{.t = T, .b = B, .h = H, .dirs = 1, .layout = 0, .reverse_first = false};
//   LaunchLstmCellForward(geo, d, k, lens, xw, pre, h, c, y, gates_k, cells_k, stream);
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace tessera::exec::cuda {

// ----- LSTM (ONNX layout and gate order i, o, f, c; see lstm_ops.cc) -------------------------

// The sizes and layout of one LSTM node. Direction d runs backwards in time when
// d == 1 or (d == 0 and reverse_first), i.e. direction kReverse.
struct LstmGeometry {
  int64_t t = 0, b = 0, h = 0, dirs = 1, layout = 0;
  bool reverse_first = false;
};

// xw[r, j] += wb[j] + rb[j] for r < rows, j < g; `bias` is one direction's [wb (g), rb (g)].
cudaError_t LaunchLstmAddBias(float* xw, const float* bias, int64_t rows, int64_t g,
                              cudaStream_t stream);
// dst[row, j] ([B, H]) = direction d of a state tensor in its layout (h0, c0, dY_h, dY_c), or 0
// when src is null.
cudaError_t LaunchLstmLoadState(const float* src, LstmGeometry geo, int64_t d, float* dst,
                                cudaStream_t stream);
// Direction d of a state tensor in its layout (Y_h, Y_c, dh0, dc0) = src[row, j] ([B, H]).
cudaError_t LaunchLstmStoreState(const float* src, LstmGeometry geo, int64_t d, float* dst,
                                 cudaStream_t stream);
// Step k of direction d. pre [B, 4H] holds h R^T; lens [B] the rows' sequence lengths. For
// every row: gates_k [B, 4H] = activated (pre + xw at the row's time); for the rows still inside
// their sequence c = f c + i g, h = o tanh(c) and Y at (time, d, row) = h; cells_k [B, H] = c.
cudaError_t LaunchLstmCellForward(LstmGeometry geo, int64_t d, int64_t k, const int64_t* lens,
                                  const float* xw, const float* pre, float* h, float* c,
                                  float* y, float* gates_k, float* cells_k, cudaStream_t stream);
// Backward of step k of direction d for the rows inside their sequence: dh += dY (dy may be
// null), dG [B, 4H] from the carried dh and dc (dc becomes dc_prev), dG also written to
// dgate_all at the row's X row. Rows past their sequence get dG = 0 and keep dh, dc.
// cells_prev is the cell state before step k ([B, H]: step k-1's cells, or c0).
cudaError_t LaunchLstmCellBackward(LstmGeometry geo, int64_t d, int64_t k, const int64_t* lens,
                                   const float* gates_k, const float* cells_k,
                                   const float* cells_prev, const float* dy, float* dh, float* dc,
                                   float* dg, float* dgate_all, cudaStream_t stream);
// h_prev [B, H]: the hidden state before step k (Y at the previous step's time, or h0 [B, H] at
// step 0); 0 for rows past their sequence.
cudaError_t LaunchLstmPreviousHidden(LstmGeometry geo, int64_t d, int64_t k, const int64_t* lens,
                                     const float* y, const float* h0, float* h_prev,
                                     cudaStream_t stream);
// dst[row, :] = src[row, :] ([B, H]) for the rows inside their sequence at step k.
cudaError_t LaunchLstmActiveRowsCopy(LstmGeometry geo, int64_t d, int64_t k, const int64_t* lens,
                                     const float* src, float* dst, cudaStream_t stream);
// db[j] = db[g + j] = sum over r < rows of dgate_all[r, j] (one direction's dWb and dRb).
cudaError_t LaunchLstmBiasGrad(const float* dgate_all, int64_t rows, int64_t g, float* db,
                               cudaStream_t stream);

// ----- CtcLoss (see ctc_ops.cc) ---------------------------------------------------------------

// The lattice of every sample: ext [N, u_max] extended labels (blank, l1, blank, ..., blank;
// padded with blank), frames [N] input lengths, states [N] = 2 * target length + 1.
struct CtcLattice {
  const int64_t* ext = nullptr;
  const int64_t* frames = nullptr;
  const int64_t* states = nullptr;
  int64_t t_max = 0, n = 0, c = 0, u_max = 1, blank = 0;
};

// One block per sample: alpha [N, T, u_max] (log space, float64, emission at t included; -inf
// where unreachable) and log_p [N] (-inf for a sample no alignment can produce).
cudaError_t LaunchCtcAlpha(const float* log_probs, CtcLattice lat, double* alpha, double* log_p,
                           cudaStream_t stream);
// One block per sample: runs the beta recursion into `beta` (scratch, [N, T, u_max] float64) and
// writes dlog_probs[t, n, c] = -scale[n] exp(logsumexp_{u: ext_u = c}(alpha + beta) - lp - log_p)
// for t < frames[n]; dlog_probs must be zeroed; samples with log_p = -inf are skipped.
cudaError_t LaunchCtcBackward(const float* log_probs, CtcLattice lat, const double* alpha,
                              const double* log_p, const double* scale, double* beta,
                              float* dlog_probs, cudaStream_t stream);

}  // namespace tessera::exec::cuda
