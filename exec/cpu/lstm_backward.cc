// The CPU LSTM backward (equations in kernels_recurrent.cc). Each part (direction, block of
// batch rows; lstm_impl.h) runs back-propagation through time for its rows on one thread: the
// cell gradients of its rows, vectorised, then dh = dG R for its rows (Eigen's kernel with R
// packed once per call: packed_matrix_impl.h). dG and h_prev
// of every (time, row) land in X's row order, so the weight gradients are one OpenBLAS product
// each per direction afterwards: dR = dG_all^T H_prev_all, dW = dG_all^T X, dX += dG_all W.
#include <algorithm>
#include <vector>

#include "tessera/exec/cpu/gemm.h"
#include "tessera/exec/cpu/kept_array_impl.h"
#include "tessera/exec/cpu/lstm_impl.h"
#include "tessera/exec/cpu/packed_matrix_impl.h"

namespace tessera::exec::cpu::lstm {
namespace {

// Per-call buffers of every direction: d's part at d * rows ([T*B, ...]) or d * B ([B, ...]).
template <typename T>
struct BackwardBuffers {
  std::vector<const T*> gates, cells;                        // per direction: forward state
  std::vector<const PackedMatrix<T, Eigen::ColMajor>*> r_t;  // per direction: R^T [H, 4H]
  T* dg_all;      // [dirs, T*B, 4H]: dG in X's row order (0 where a row's sequence is over)
  T* h_prev_all;  // [dirs, T*B, H]: the hidden state each dG multiplies in dR
  T* dg;          // [dirs, B, 4H]: one step's dG when its rows are not one block of dg_all
  T* dh;          // [dirs, B, H]: the gradient reaching Y_h, then dh0
  T* dh_new;      // [dirs, B, H]: dG R of the step after
  T* dc;          // [dirs, B, H]: the gradient reaching c (Y_c on entry, dc0 on return)
  T* h0;          // [dirs, B, H]
  T* c0;          // [dirs, B, H]
};

template <typename T>
struct BackwardScratch {
  ScratchVector<T> dg_all, h_prev_all, dg, dh, dh_new, dc, h0, c0;
  PackedMatrix<T, Eigen::ColMajor> r_t[2];
};

// dG of one row at one step. dh holds the whole gradient reaching h (it is consumed); dc holds
// the one reaching c on entry and the one reaching c_prev on return. tanh(c) is recomputed
// (as the forward computed it) into dG_o's slot, which is then overwritten with dG_o.
template <typename T>
void CellBackward(int64_t H, const T* gate, const T* c, const T* c_prev, const T* dh, T* dc,
                  T* dg) {
  const ConstArrayMap<T> i(gate, H), o(gate + H, H), f(gate + 2 * H, H), g(gate + 3 * H, H);
  const ConstArrayMap<T> dhv(dh, H);
  ArrayMap<T> dct(dc, H), tc(dg + H, H);
  tc = ConstArrayMap<T>(c, H).tanh();
  dct += dhv * o * (T(1) - tc.square());
  tc = dhv * tc * o * (T(1) - o);
  ArrayMap<T>(dg, H) = dct * g * i * (T(1) - i);
  ArrayMap<T>(dg + 2 * H, H) = dct * ConstArrayMap<T>(c_prev, H) * f * (T(1) - f);
  ArrayMap<T>(dg + 3 * H, H) = dct * i * (T(1) - g.square());
  dct *= f;
}

// The rows of part p at step k: dG into dg_step's rows, dG and h_prev into X's row order.
template <typename T>
void BackwardStep(const Lstm& l, const LstmPart& p, int64_t k, const BackwardArgs<T>& a,
                  const BackwardBuffers<T>& buf, T* dg_step) {
  const int64_t H = l.h, G = 4 * l.h, d = p.d, rows = l.t * l.b;
  const T* dy = a.grad_outputs[0].data;
  const T* y = a.outputs[0].data;
  const T *gates = buf.gates[d], *cells = buf.cells[d];
  const int64_t at = d * l.b * H;  // direction d's [B, H] buffers
  for (int64_t row = p.r0; row < p.r1; ++row) {
    const int64_t time = l.Time(d, k, row);
    T* dgr = dg_step + row * G;
    if (time < 0) {
      std::fill(dgr, dgr + G, T(0));
      continue;
    }
    const int64_t x = l.XRow(time, row);
    // The gradient reaching h: from Y_h at the row's last step, else from the step after.
    T* dh = (k == l.lens[row] - 1 ? buf.dh : buf.dh_new) + at + row * H;
    if (dy != nullptr) ArrayMap<T>(dh, H) += ConstArrayMap<T>(dy + l.YOffset(time, d, row), H);
    CellBackward<T>(H, gates + x * G, cells + x * H,
                    PreviousCell(l, d, k, row, cells, buf.c0 + at), dh, buf.dc + at + row * H,
                    dgr);
    T* dg_all = buf.dg_all + d * rows * G;
    if (!l.uniform) std::copy(dgr, dgr + G, dg_all + x * G);
    const T* hp = k == 0 ? buf.h0 + at + row * H : y + l.YOffset(l.Time(d, k - 1, row), d, row);
    std::copy(hp, hp + H, buf.h_prev_all + (d * rows + x) * H);
  }
}

// Back-propagation through time for the rows of part p; leaves dh0 in buf.dh.
template <typename T>
void BackwardPart(const Lstm& l, const LstmPart& p, const BackwardArgs<T>& a,
                  const BackwardBuffers<T>& buf) {
  const int64_t H = l.h, G = 4 * l.h, d = p.d, n = p.r1 - p.r0;
  T* dg_all = buf.dg_all + d * l.t * l.b * G;
  T* dh_new = buf.dh_new + d * l.b * H;
  for (int64_t k = PartSteps(l, p) - 1; k >= 0; --k) {
    // Uniform: every row is at the same time, and the step's rows are one block of X rows.
    T* dg_step = l.uniform ? dg_all + l.XRow(l.Time(d, k, 0), 0) * G : buf.dg + d * l.b * G;
    BackwardStep(l, p, k, a, buf, dg_step);
    buf.r_t[d]->Multiply(dg_step + p.r0 * G, G, n, dh_new + p.r0 * H, H);  // dh^T = R^T dG^T
  }
  for (int64_t row = p.r0; row < p.r1; ++row) {  // dh0: what reached h before step 0
    T* dh0 = buf.dh + d * l.b * H + row * H;
    if (l.lens[row] > 0) std::copy(dh_new + row * H, dh_new + (row + 1) * H, dh0);
  }
}

// dX, dW, dR and dB of direction d from dG and h_prev of every X row.
template <typename T>
void WeightGradients(const Lstm& l, int64_t d, const BackwardArgs<T>& a,
                     const BackwardBuffers<T>& buf) {
  const int64_t H = l.h, G = 4 * l.h, rows = l.t * l.b;
  const T* dg_all = buf.dg_all + d * rows * G;
  if (a.grad_inputs[0].present())
    Gemm<T>(false, false, rows, l.i, G, T(1), dg_all, G, a.inputs[1].data + d * G * l.i, l.i,
            d == 0 ? T(0) : T(1), a.grad_inputs[0].data, l.i);
  if (a.grad_inputs[1].present())
    Gemm<T>(true, false, G, l.i, rows, T(1), dg_all, G, a.inputs[0].data, l.i, T(0),
            a.grad_inputs[1].data + d * G * l.i, l.i);
  if (a.grad_inputs[2].present())
    Gemm<T>(true, false, G, H, rows, T(1), dg_all, G, buf.h_prev_all + d * rows * H, H, T(0),
            a.grad_inputs[2].data + d * G * H, H);
  if (const Tensor<T>* db = Optional(a.grad_inputs, 3)) {
    ArrayMap<T> wb(db->data + d * 2 * G, G);
    wb.setZero();
    for (int64_t x = 0; x < rows; ++x) wb += ConstArrayMap<T>(dg_all + x * G, G);
    ArrayMap<T>(db->data + d * 2 * G + G, G) = wb;
  }
}

template <typename T>
BackwardBuffers<T> MakeBuffers(const Lstm& l, const BackwardArgs<T>& a) {
  thread_local BackwardScratch<T> s;
  const int64_t H = l.h, G = 4 * l.h, rows = l.t * l.b, states = l.dirs * l.b * H;
  BackwardBuffers<T> buf{.dg_all = GrowScratch(s.dg_all, l.dirs * rows * G),
                         .h_prev_all = GrowScratch(s.h_prev_all, l.dirs * rows * H),
                         .dg = GrowScratch(s.dg, l.dirs * l.b * G),
                         .dh = GrowScratch(s.dh, states),
                         .dh_new = GrowScratch(s.dh_new, states),
                         .dc = GrowScratch(s.dc, states),
                         .h0 = GrowScratch(s.h0, states),
                         .c0 = GrowScratch(s.c0, states)};
  if (!l.full) {  // positions past a row's sequence: dG = 0 (and h_prev finite)
    std::fill(buf.dg_all, buf.dg_all + l.dirs * rows * G, T(0));
    std::fill(buf.h_prev_all, buf.h_prev_all + l.dirs * rows * H, T(0));
  }
  for (int64_t d = 0; d < l.dirs; ++d) {
    s.r_t[d].Pack(a.inputs[2].data + d * G * H, H, G, H, l.b);
    buf.r_t.push_back(&s.r_t[d]);
    buf.gates.push_back(KeptArray<T>(a.state.reals.at(2 * d)));
    buf.cells.push_back(KeptArray<T>(a.state.reals.at(2 * d + 1)));
    GatherState(l, Optional(a.inputs, 5), d, buf.h0 + d * l.b * H);
    GatherState(l, Optional(a.inputs, 6), d, buf.c0 + d * l.b * H);
    GatherState(l, Optional(a.grad_outputs, 1), d, buf.dh + d * l.b * H);
    GatherState(l, Optional(a.grad_outputs, 2), d, buf.dc + d * l.b * H);
  }
  return buf;
}

}  // namespace

template <typename T>
absl::Status LstmBackward(const BackwardArgs<T>& a) {
  absl::StatusOr<Lstm> planned = PlanLstm(a.node, a.inputs);
  if (!planned.ok()) return planned.status();
  const Lstm& l = *planned;
  if (a.grad_inputs.size() > 4 && a.grad_inputs[4].present()) {  // sequence_lens: none
    std::fill(a.grad_inputs[4].data, a.grad_inputs[4].data + a.grad_inputs[4].size(), T(0));
  }
  const BackwardBuffers<T> buf = MakeBuffers(l, a);
  ForEachPart(l, a.ctx.threads, [&](const LstmPart& p) { BackwardPart(l, p, a, buf); });
  for (int64_t d = 0; d < l.dirs; ++d) {
    ScatterState(l, buf.dh + d * l.b * l.h, d, Optional(a.grad_inputs, 5));
    ScatterState(l, buf.dc + d * l.b * l.h, d, Optional(a.grad_inputs, 6));
    WeightGradients(l, d, a, buf);
  }
  return absl::OkStatus();
}

template absl::Status LstmBackward<float>(const BackwardArgs<float>&);
template absl::Status LstmBackward<double>(const BackwardArgs<double>&);

}  // namespace tessera::exec::cpu::lstm
